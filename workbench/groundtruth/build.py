"""Where Pinot's jars and the driver live, and how they are fetched: Maven, from the pinned pom.

``probes/pinot/pom.xml`` pins one Apache Pinot release and resolves its modules from Maven Central into
``probes/pinot/target/lib``; the same build compiles the driver (``probes/pinot/src``) into
``target/classes``. :func:`ensure_built` runs that build when the jars are missing or older than the pom
or the driver, so ``make test`` and a user's first call fetch Pinot by themselves.

``probes/kafka/pom.xml`` does the same for an Apache Kafka broker (KRaft mode) and its small mains
(:func:`ensure_kafka_built`), the stream REALTIME tables consume from: its own class path, because Pinot's parent pom
pins Scala 2.12 and Kafka's server here is Scala 2.13.

Each thing that can be missing gets one line saying what to do: Java older than 17, no Maven, and
Maven failing to fetch a jar (its own error line names the coordinates).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from workbench.errors import WorkbenchError

__all__ = ["KAFKA_PROBE_DIR", "PROBE_DIR", "GroundTruthError", "PinotJars", "ensure_built", "ensure_kafka_built",
           "java_major_version"]

#: The Maven project (pom and driver source); ``WORKBENCH_PINOT_PROBE`` names another checkout's.
PROBE_DIR = Path(os.environ.get("WORKBENCH_PINOT_PROBE", Path(__file__).resolve().parents[2] / "probes" / "pinot"))
_DRIVER_CLASS = Path("workbench") / "groundtruth" / "PinotParts.class"
#: Pinot modules the pom resolves into target/lib; one missing means the lib dir predates the pom.
_MODULES = ("pinot-core", "pinot-broker", "pinot-controller", "kafka-clients")
#: The Kafka broker's Maven project; ``WORKBENCH_KAFKA_PROBE`` names another checkout's.
KAFKA_PROBE_DIR = Path(os.environ.get("WORKBENCH_KAFKA_PROBE", PROBE_DIR.parent / "kafka"))
_KAFKA_MAIN_CLASS = Path("workbench") / "kafka" / "KafkaMain.class"
_KAFKA_MODULES = ("kafka_2.13", "kafka-clients")
_JAVA_HELP = ("install a JDK 17+ (Debian/Ubuntu: apt-get install -y openjdk-17-jdk-headless; "
              "macOS: brew install openjdk@17) or put $JAVA_HOME/bin of one on PATH")


class GroundTruthError(WorkbenchError):
    """Pinot could not be fetched, built or run here; the message says what to do."""


class PinotRefused(GroundTruthError):
    """Pinot itself refused what it was given (a table config or schema its controller rejects, rows its segment
    creator cannot build): ``pinot_message`` is Pinot's own message, for the caller to name the input it came from."""

    def __init__(self, what: str, pinot_message: str) -> None:
        super().__init__(f"{what}: {pinot_message}")
        self.what = what
        self.pinot_message = pinot_message


@dataclass(frozen=True)
class PinotJars:
    """A built probe: the class path of Pinot's jars plus the driver, and the release they are."""

    lib: Path
    classes: Path
    version: str

    @property
    def classpath(self) -> str:
        return f"{self.classes}{os.pathsep}{self.lib / '*'}"


def java_major_version(java: str = "java") -> int:
    """The major version of ``java`` (17 for "17.0.15"); 0 when it cannot say."""
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60).stderr
    except (OSError, subprocess.TimeoutExpired):
        return 0
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out)
    if match is None:
        return 0
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major  # "1.8.0" is Java 8


def pinned_version(probe: Path = PROBE_DIR) -> str:
    """The Pinot release the pom pins (its ``pinot.version`` property)."""
    match = re.search(r"<pinot\.version>([^<]+)</pinot\.version>", (probe / "pom.xml").read_text())
    if match is None:
        raise GroundTruthError(f"{probe / 'pom.xml'}: no <pinot.version> property; restore the file from git")
    return match.group(1)


def _stale(probe: Path, driver: Path = _DRIVER_CLASS, modules: tuple[str, ...] = _MODULES) -> bool:
    target = probe / "target"
    marker = target / "classes" / driver
    lib = target / "lib"
    if not marker.is_file() or not lib.is_dir():
        return True
    if not all(any(lib.glob(f"{module}-*.jar")) for module in modules):  # a lib dir from an older pom
        return True
    built = marker.stat().st_mtime
    sources = [probe / "pom.xml", *(probe / "src").rglob("*.java"), *(probe / "src").rglob("*.properties")]
    return any(s.stat().st_mtime > built for s in sources)


def check_java() -> str:
    """The ``java`` to run Pinot with, or one line saying what to install."""
    java = shutil.which("java")
    if java is None:
        raise GroundTruthError(f"java not found on PATH: Pinot needs Java 17+; {_JAVA_HELP}")
    major = java_major_version(java)
    if major < 17:
        raise GroundTruthError(f"{java} is Java {major or 'of an unknown version'}: Pinot needs 17+; {_JAVA_HELP}")
    return java


def ensure_built(probe: Path = PROBE_DIR) -> PinotJars:
    """Pinot's jars and the driver, fetched and compiled by Maven first if missing or out of date."""
    _build(probe, _DRIVER_CLASS, _MODULES, f"Pinot {pinned_version(probe) if (probe / 'pom.xml').is_file() else ''}",
           "WORKBENCH_PINOT_PROBE to its probes/pinot directory")
    target = probe / "target"
    return PinotJars(target / "lib", target / "classes", pinned_version(probe))


def ensure_kafka_built(probe: Path = KAFKA_PROBE_DIR) -> PinotJars:
    """Kafka's broker jars and the workbench's Kafka mains (``workbench.kafka.KafkaMain``, ``ProduceMain``), fetched
    and compiled by Maven first if missing or out of date; ``version`` is the Kafka release the pom pins."""
    _build(probe, _KAFKA_MAIN_CLASS, _KAFKA_MODULES, "Kafka", "WORKBENCH_KAFKA_PROBE to its probes/kafka directory")
    match = re.search(r"<kafka\.version>([^<]+)</kafka\.version>", (probe / "pom.xml").read_text())
    target = probe / "target"
    return PinotJars(target / "lib", target / "classes", match.group(1) if match else "")


def _build(probe: Path, driver: Path, modules: tuple[str, ...], what: str, env_help: str) -> None:
    if not (probe / "pom.xml").is_file():
        raise GroundTruthError(f"{probe / 'pom.xml'} not found: run from a workbench checkout, or set {env_help}")
    check_java()
    if _stale(probe, driver, modules):
        mvn = shutil.which("mvn")
        if mvn is None:
            raise GroundTruthError("mvn not found on PATH: fetching Pinot's jars needs Maven 3.8+ "
                                   "(Debian/Ubuntu: apt-get install -y maven; macOS: brew install maven)")
        done = subprocess.run([mvn, "-q", "-B", "-f", str(probe / "pom.xml"), "package"],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise GroundTruthError(f"Maven could not fetch or build {what.strip()} "
                                   f"({probe / 'pom.xml'}): {_first_error(done.stdout + done.stderr)}")


def _first_error(output: str) -> str:
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in output.splitlines()]
    errors = [line.removeprefix("[ERROR] ").strip() for line in lines if line.startswith("[ERROR]")]
    return next((e for e in errors if e), lines[-1] if lines else "no output")
