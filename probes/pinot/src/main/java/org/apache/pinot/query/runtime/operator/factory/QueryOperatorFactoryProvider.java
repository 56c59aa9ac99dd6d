package org.apache.pinot.query.runtime.operator.factory;

/**
 * The workbench's own empty stand-in for an interface of pinot-query-runtime (the multi-stage engine), which Maven
 * Central as served here does not have at 1.5.1 ("Could not find artifact").
 *
 * <p>Why it exists: Pinot 1.5.1's {@code BaseBrokerStarter.init} sets the multi-stage engine's operator factory
 * ({@code BrokerContext.setQueryOperatorFactoryProvider(createQueryOperatorFactoryProvider(conf))}, non-null) even
 * with {@code pinot.multistage.engine.enabled=false}, and its default, {@code DefaultQueryOperatorFactoryProvider},
 * lives in pinot-query-runtime: without this type the broker fails with {@code NoClassDefFoundError:
 * org/apache/pinot/query/runtime/operator/factory/QueryOperatorFactoryProvider} before it starts.
 * {@code workbench.cluster.HelixBrokerMain} overrides that method to return an instance of this interface, which
 * nothing on the single-stage path reads. Delete this file once pinot-query-runtime resolves (the pom then brings
 * Pinot's own).
 */
public interface QueryOperatorFactoryProvider {
}
