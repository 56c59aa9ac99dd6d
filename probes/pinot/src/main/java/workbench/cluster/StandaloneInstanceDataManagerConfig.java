package workbench.cluster;

import java.util.Map;
import org.apache.pinot.segment.spi.loader.SegmentDirectoryLoaderRegistry;
import org.apache.pinot.spi.config.instance.InstanceDataManagerConfig;
import org.apache.pinot.spi.env.PinotConfiguration;
import org.apache.pinot.spi.utils.ReadMode;


/**
 * The instance data manager settings a Pinot server's {@code OfflineTableDataManager} reads, without Helix.
 *
 * <p>Pinot's own implementation ({@code HelixInstanceDataManagerConfig}) lives in pinot-server, which Maven Central
 * does not serve here. The values are that class's defaults at 1.5.1 (deleted-segment cache 10,000 entries for 2
 * minutes, CRC check on load, no peer download, no stream untar, no deep-store upload); the table data manager only
 * reads the instance id, the data directory, those caches and the auth config when it is initialised and segments
 * are added already loaded.
 */
final class StandaloneInstanceDataManagerConfig implements InstanceDataManagerConfig {
  private final PinotConfiguration _config;
  private final String _instanceId;
  private final String _dataDir;

  StandaloneInstanceDataManagerConfig(PinotConfiguration config, String instanceId, String dataDir) {
    _config = config;
    _instanceId = instanceId;
    _dataDir = dataDir;
  }

  @Override
  public PinotConfiguration getConfig() {
    return _config;
  }

  @Override
  public String getInstanceId() {
    return _instanceId;
  }

  @Override
  public String getInstanceDataDir() {
    return _dataDir;
  }

  @Override
  public String getConsumerDir() {
    return null;
  }

  @Override
  public String getInstanceSegmentTarDir() {
    return _dataDir + "/tar";
  }

  @Override
  public String getTableDataManagerProviderClass() {
    return "org.apache.pinot.core.data.manager.provider.DefaultTableDataManagerProvider";
  }

  @Override
  public String getSegmentStoreUri() {
    return null;
  }

  @Override
  public String getConsumerClientIdSuffix() {
    return null;
  }

  @Override
  public ReadMode getReadMode() {
    return ReadMode.mmap;
  }

  @Override
  public String getSegmentFormatVersion() {
    return null;
  }

  @Override
  public String getAvgMultiValueCount() {
    return null;
  }

  @Override
  public boolean isRealtimeOffHeapAllocation() {
    return true;
  }

  @Override
  public boolean isDirectRealtimeOffHeapAllocation() {
    return false;
  }

  @Override
  public boolean shouldReloadConsumingSegment() {
    return true;
  }

  @Override
  public int getMaxParallelRefreshThreads() {
    return 1;
  }

  @Override
  public boolean isAsyncSegmentRefreshEnabled() {
    return false;
  }

  @Override
  public int getMaxSegmentPreloadThreads() {
    return 0;
  }

  @Override
  public int getMaxParallelSegmentBuilds() {
    return 4;
  }

  @Override
  public int getMaxParallelSegmentDownloads() {
    return -1;
  }

  @Override
  public String getSegmentDirectoryLoader() {
    return SegmentDirectoryLoaderRegistry.DEFAULT_SEGMENT_DIRECTORY_LOADER_NAME;
  }

  @Override
  public long getErrorCacheSize() {
    return 100L;
  }

  @Override
  public boolean isStreamSegmentDownloadUntar() {
    return false;
  }

  @Override
  public long getStreamSegmentDownloadUntarRateLimit() {
    return Long.MAX_VALUE;
  }

  @Override
  public int getDeletedTablesCacheTtlMinutes() {
    return 60;
  }

  @Override
  public int getDeletedSegmentsCacheSize() {
    return 10_000;
  }

  @Override
  public int getDeletedSegmentsCacheTtlMinutes() {
    return 2;
  }

  @Override
  public String getSegmentPeerDownloadScheme() {
    return null;
  }

  @Override
  public PinotConfiguration getUpsertConfig() {
    return new PinotConfiguration();
  }

  @Override
  public PinotConfiguration getDedupConfig() {
    return new PinotConfiguration();
  }

  /** None: Pinot's AuthProviderUtils makes its NullAuthProvider from null (an empty PinotConfiguration still carries
   * the environment's properties, which it refuses as "auth properties defined, but no provider"). */
  @Override
  public PinotConfiguration getAuthConfig() {
    return null;
  }

  @Override
  public Map<String, Map<String, String>> getTierConfigs() {
    return Map.of();
  }

  @Override
  public boolean isUploadSegmentToDeepStore() {
    return false;
  }

  @Override
  public boolean shouldCheckCRCOnSegmentLoad() {
    return true;
  }

  @Override
  public boolean isDimensionTablePreloadDisabled() {
    return false;
  }
}
