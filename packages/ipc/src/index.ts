export { ipcAvailability } from './ipc-native.js';
export type { IpcAvailability } from './ipc-native.js';
export { SharedSegment } from './shared-segment.js';
export type { SegmentAccess, SharedSegmentCreateOptions, SharedSegmentDescriptorOptions, SharedSegmentOpenOptions, SharedSegmentSealedOptions } from './shared-segment.js';
export {
  FRAME_BYTES,
  FRAME_MAGIC,
  WIRE_VERSION,
  MAX_DESCRIPTOR_RANK,
  FrameType,
  DescriptorFlag,
  WireMemoryKind,
  GoodbyeReason,
  HelloFlag,
  AttachFlag,
} from './wire/frame-layout.js';
export { TensorDescriptor } from './wire/tensor-descriptor.js';
export { DescriptorDecoder, encodeDescriptor } from './wire/descriptor-codec.js';
export type { DescriptorFields, TopicGeometry } from './wire/descriptor-codec.js';
export { decodeHello, encodeHello, encodeAttach, attachUsesMailbox, MAX_TOPIC_SLOTS } from './wire/control-frames.js';
export type { TopicHello } from './wire/control-frames.js';
export { TopicPublisher } from './topic-publisher.js';
export type { TopicPublisherOptions, DeviceTopicListenOptions } from './topic-options.js';
export type { SubscriberLost, SubscriberLossReason } from './subscriber-session.js';
export { ChannelRuntime } from './channel-runtime.js';
export type { ChannelRuntimeOptions } from './channel-runtime.js';
export { TopicLease } from './topic-lease.js';
export { resolveMailboxWait } from './mailbox/mailbox-wait.js';
export type { MailboxWait } from './mailbox/mailbox-wait.js';
export { topicDirectory, reapStaleSegments, reapStaleDoorbells } from './topic-endpoint.js';
export { installIpcCleanup } from './ipc-cleanup.js';
// graph + device boundary (ipc-graph)
export { IpcBoundaries } from './graph/ipc-boundaries.js';
export type { IpcBoundariesOptions } from './graph/ipc-boundaries.js';
export { DeviceTopicPublisher } from './device/device-topic-publisher.js';
export type { DeviceTopicPoolSpec } from './device/device-topic-publisher.js';
export { encodeDeviceHello, decodeDeviceHello } from './device/device-hello.js';
export type { DeviceHello } from './device/device-hello.js';
export { fenceCounterBytes, fenceCounterOffset } from './device/fence-counters.js';
