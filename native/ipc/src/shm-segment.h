// POSIX shared-memory segments for hs boundary pools: pure C++ (no Node-API), so a sanitizer test can
// link it directly. Every function returns 0 or an errno value; nothing throws.
#pragma once

#include <cstddef>

namespace hs::ipc {

// True for "/" followed by 1..200 characters of [A-Za-z0-9._-] (no further slash, no NUL).
bool ValidSegmentName(const char* name);

// A mapped segment. `address` is null once unmapped.
struct Mapping {
  void* address = nullptr;
  std::size_t byteSize = 0;
};

// Creates `name` exclusively (O_CREAT | O_EXCL, mode 0600), sizes it to `byteSize` (> 0) bytes and maps it
// read/write. On failure nothing is left behind (the name is unlinked again). EEXIST when the name exists.
int CreateSegment(const char* name, std::size_t byteSize, Mapping* out);

// Opens an existing segment and maps all of it read/write. Refuses (EACCES) a segment that another user
// owns or that group/others may access, and (EINVAL) one smaller than `minByteSize` or empty.
int OpenSegment(const char* name, std::size_t minByteSize, Mapping* out);

// Removes the name; mappings stay valid until unmapped. ENOENT when it does not exist.
int UnlinkSegment(const char* name);

// Unmaps a mapping (idempotent: a mapping with a null address is left alone).
int UnmapSegment(Mapping* mapping);

}  // namespace hs::ipc
