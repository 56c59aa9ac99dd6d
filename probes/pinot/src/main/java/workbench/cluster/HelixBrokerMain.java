package workbench.cluster;

import java.util.HashMap;
import java.util.Map;
import org.apache.pinot.broker.broker.helix.HelixBrokerStarter;
import org.apache.pinot.query.runtime.operator.factory.QueryOperatorFactoryProvider;
import org.apache.pinot.spi.env.PinotConfiguration;
import org.apache.pinot.spi.utils.CommonConstants;


/**
 * Pinot's own broker ({@link HelixBrokerStarter}: Helix spectator and participant, routing manager, single-stage
 * request handler, HTTP {@code /query/sql} and {@code /health}, query log) against a Helix cluster, serving until
 * killed.
 *
 * <p>The multi-stage engine is off ({@code pinot.multistage.engine.enabled=false}): pinot-query-runtime and
 * pinot-query-planner are not served here. One thing of that engine is set up regardless at 1.5.1, its operator
 * factory; {@link SingleStageBroker} gives an empty one (see {@link QueryOperatorFactoryProvider}'s stand-in).
 *
 * <p>Usage: {@code HelixBrokerMain ZK CLUSTER HOST PORT [KEY=VALUE...]} (keys: Pinot broker config); prints
 * {@code READY instance=Broker_HOST_PORT} once started; SIGTERM stops the broker.
 */
public final class HelixBrokerMain {
  private HelixBrokerMain() {
  }

  /** Pinot's HelixBrokerStarter, but for the multi-stage engine's operator factory, which it does not use. */
  static final class SingleStageBroker extends HelixBrokerStarter {
    @Override
    protected QueryOperatorFactoryProvider createQueryOperatorFactoryProvider(PinotConfiguration brokerConf) {
      return new QueryOperatorFactoryProvider() {
      };
    }
  }

  public static void main(String[] args) {
    JvmMain.main(() -> {
      if (args.length < 4) {
        throw new IllegalArgumentException("usage: HelixBrokerMain ZK CLUSTER HOST PORT [KEY=VALUE...]");
      }
      Map<String, Object> conf = new HashMap<>();
      conf.put(CommonConstants.Helix.CONFIG_OF_ZOOKEEPER_SERVER, args[0]);
      conf.put(CommonConstants.Helix.CONFIG_OF_CLUSTER_NAME, args[1]);
      conf.put(CommonConstants.Broker.CONFIG_OF_BROKER_HOSTNAME, args[2]);
      conf.put(CommonConstants.Helix.KEY_OF_BROKER_QUERY_PORT, args[3]);
      conf.put(CommonConstants.Helix.CONFIG_OF_MULTI_STAGE_ENGINE_ENABLED, "false");
      conf.putAll(JvmMain.keyValues(args, 4));
      HelixBrokerStarter broker = new SingleStageBroker();
      broker.init(new PinotConfiguration(conf));
      broker.start();
      JvmMain.serve("READY instance=" + broker.getInstanceId(), "workbench-broker-stop", broker::stop);
    });
  }
}
