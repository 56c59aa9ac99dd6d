"""Fail early, with the fix, when Java 17+ is missing (PySpark 4 needs it)."""

import re
import shutil
import subprocess
import sys

HELP = (
    "Spark needs Java 17 or newer on PATH.\n"
    "  Debian/Ubuntu: sudo apt-get install -y openjdk-17-jre-headless\n"
    "  macOS:         brew install openjdk@17\n"
    "  conda:         conda env create -f environment.yml (installs openjdk 17)\n"
    "or set JAVA_HOME to a JDK 17+ and put $JAVA_HOME/bin on PATH."
)

java = shutil.which("java")
if java is None:
    sys.exit(f"error: java not found.\n{HELP}")
out = subprocess.run([java, "-version"], capture_output=True, text=True).stderr
m = re.search(r'version "(\d+)', out)
if not m or int(m.group(1)) < 17:
    sys.exit(f"error: found {out.splitlines()[0] if out else 'an unknown java'}.\n{HELP}")
