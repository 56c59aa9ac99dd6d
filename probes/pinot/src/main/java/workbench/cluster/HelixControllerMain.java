package workbench.cluster;

import java.io.File;
import java.util.HashMap;
import java.util.Map;
import org.apache.pinot.common.utils.ZkStarter;
import org.apache.pinot.controller.ControllerConf;
import org.apache.pinot.controller.ControllerStarter;
import org.apache.pinot.spi.env.PinotConfiguration;


/**
 * ZooKeeper and a real Pinot controller ({@link ControllerStarter}) in one JVM, serving until killed.
 *
 * <p>Usage: {@code HelixControllerMain WORK_DIR ZK_PORT CONTROLLER_PORT CLUSTER}; prints
 * {@code READY zk=127.0.0.1:ZK_PORT controller=http://127.0.0.1:CONTROLLER_PORT} once started.
 */
public final class HelixControllerMain {
  private HelixControllerMain() {
  }

  public static void main(String[] args) {
    JvmMain.main(() -> {
      File work = new File(args[0]);
      ZkStarter.ZookeeperInstance zk =
          ZkStarter.startLocalZkServer(Integer.parseInt(args[1]), new File(work, "zk").getPath());
      Map<String, Object> conf = new HashMap<>();
      conf.put(ControllerConf.ZK_STR, zk.getZkUrl());
      conf.put(ControllerConf.HELIX_CLUSTER_NAME, args[3]);
      conf.put(ControllerConf.CONTROLLER_HOST, "127.0.0.1");
      conf.put(ControllerConf.CONTROLLER_PORT, args[2]);
      conf.put(ControllerConf.DATA_DIR, new File(work, "controller-data").getPath());
      ControllerStarter controller = new ControllerStarter();
      controller.init(new PinotConfiguration(conf));
      controller.start();
      JvmMain.serve("READY zk=" + zk.getZkUrl() + " controller=http://127.0.0.1:" + args[2],
          "workbench-controller-stop", () -> {
            controller.stop();
            ZkStarter.stopLocalZkServer(zk);
          });
    });
  }
}
