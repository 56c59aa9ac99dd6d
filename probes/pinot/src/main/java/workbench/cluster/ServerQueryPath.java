package workbench.cluster;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.util.Set;
import java.util.concurrent.atomic.LongAccumulator;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.pinot.common.function.FunctionRegistry;
import org.apache.pinot.common.metrics.ServerMetrics;
import org.apache.pinot.core.data.manager.InstanceDataManager;
import org.apache.pinot.core.operator.transform.function.TransformFunctionFactory;
import org.apache.pinot.core.query.executor.QueryExecutor;
import org.apache.pinot.core.query.executor.ServerQueryExecutorV1Impl;
import org.apache.pinot.core.query.logger.ServerQueryLogger;
import org.apache.pinot.core.query.scheduler.QueryScheduler;
import org.apache.pinot.core.query.scheduler.QuerySchedulerFactory;
import org.apache.pinot.core.transport.InstanceRequestHandler;
import org.apache.pinot.core.transport.QueryServer;
import org.apache.pinot.segment.local.data.manager.TableDataManager;
import org.apache.pinot.server.access.AllowAllAccessFactory;
import org.apache.pinot.spi.accounting.ThreadAccountant;
import org.apache.pinot.spi.accounting.ThreadAccountantUtils;
import org.apache.pinot.spi.accounting.ThreadResourceUsageProvider;
import org.apache.pinot.spi.env.PinotConfiguration;
import org.apache.pinot.spi.utils.CommonConstants;


/**
 * A Pinot server's single-stage query path, started as pinot-server's ServerInstance starts it at 1.5.1, for both
 * of the workbench's servers: {@link PinotServer} (its segments given, Helix stood in for) and
 * {@link HelixServerMain} (a Helix participant loading what the controller assigns). One copy, so the two serve
 * queries the same way.
 */
final class ServerQueryPath {
  private final QueryExecutor _executor;
  private final QueryScheduler _scheduler;
  private final QueryServer _server;

  private ServerQueryPath(QueryExecutor executor, QueryScheduler scheduler, QueryServer server) {
    _executor = executor;
    _scheduler = scheduler;
    _server = server;
  }

  /**
   * The InstanceDataManager the query executor sees: a stand-in answering getInstanceId, getTableDataManager and
   * getAllTables from {@code tables} and {@code names}; any other call throws (only the query path is served).
   */
  static InstanceDataManager instanceDataManager(String instanceId, Function<String, TableDataManager> tables,
      Supplier<Set<String>> names) {
    InvocationHandler handler = (proxy, method, methodArgs) -> {
      switch (method.getName()) {
        case "getInstanceId":
          return instanceId;
        case "getTableDataManager":
          return tables.apply((String) methodArgs[0]);
        case "getAllTables":
          return names.get();
        case "toString":
          return "InstanceDataManager(" + instanceId + ", " + names.get() + ")";
        case "hashCode":
          return System.identityHashCode(proxy);
        case "equals":
          return proxy == methodArgs[0];
        default:
          throw new UnsupportedOperationException("InstanceDataManager." + method.getName()
              + " called: only the single-stage query path is served here");
      }
    };
    return (InstanceDataManager) Proxy.newProxyInstance(ServerQueryPath.class.getClassLoader(),
        new Class<?>[]{InstanceDataManager.class}, handler);
  }

  /**
   * Start it on {@code port}: per-thread CPU time in each response's metadata only when the server config turns it
   * on (as BaseServerStarter); the query logger and function registry first, then the executor, the scheduler
   * QuerySchedulerFactory makes from {@code pinot.query.scheduler.*}, and Netty's QueryServer (as ServerInstance).
   */
  static ServerQueryPath start(PinotConfiguration serverConf, String instanceId, int port,
      InstanceDataManager instanceDataManager)
      throws Exception {
    ServerMetrics serverMetrics = ServerMetrics.get();  // Pinot's no-op registry: no metrics reporter here
    ThreadAccountant accountant = ThreadAccountantUtils.getNoOpAccountant();
    ThreadResourceUsageProvider.setThreadCpuTimeMeasurementEnabled(serverConf.getProperty(
        CommonConstants.Server.CONFIG_OF_ENABLE_THREAD_CPU_TIME_MEASUREMENT,
        CommonConstants.Server.DEFAULT_ENABLE_THREAD_CPU_TIME_MEASUREMENT));
    ServerQueryLogger.init(
        serverConf.getProperty(CommonConstants.Server.CONFIG_OF_QUERY_LOG_MAX_RATE,
            CommonConstants.Server.DEFAULT_QUERY_LOG_MAX_RATE),
        CommonConstants.Server.DEFAULT_QUERY_LOG_DROPPED_REPORT_MAX_RATE, serverMetrics);
    FunctionRegistry.init();
    TransformFunctionFactory.init(Set.of());
    QueryExecutor executor = new ServerQueryExecutorV1Impl();
    executor.init(serverConf.subset(CommonConstants.Server.QUERY_EXECUTOR_CONFIG_PREFIX), instanceDataManager,
        serverMetrics);
    QueryScheduler scheduler = QuerySchedulerFactory.create(
        serverConf.subset(CommonConstants.PINOT_QUERY_SCHEDULER_PREFIX), instanceId, executor, accountant,
        new LongAccumulator(Long::max, 0));
    InstanceRequestHandler handler = new InstanceRequestHandler(instanceId, serverConf, scheduler,
        new AllowAllAccessFactory().create(), accountant);
    QueryServer server = new QueryServer(port, null, handler);
    executor.start();
    scheduler.start();
    server.start();
    return new ServerQueryPath(executor, scheduler, server);
  }

  /** The scheduler's name ({@code fcfs}, {@code bounded_fcfs}, ...), for the READY line. */
  String schedulerName() {
    return _scheduler.name();
  }

  /** Stop taking queries: Netty first, then the scheduler and the executor. */
  void stop() {
    _server.shutDown();
    _scheduler.stop();
    _executor.shutDown();
  }
}
