// The errno name the addon's JS errors carry as `code` (for example "ENOSPC"): one table for every binding
// (segments, sockets, doorbells), so the TypeScript layer maps each name to one ErrorCode everywhere.
#pragma once

#include <cerrno>

namespace hs::ipc {

inline const char* ErrnoName(int code) {
  switch (code) {
    case EEXIST: return "EEXIST";
    case ENOENT: return "ENOENT";
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case EINVAL: return "EINVAL";
    case ENOMEM: return "ENOMEM";
    case ENOSPC: return "ENOSPC";
    case EDQUOT: return "EDQUOT";
    case EFBIG: return "EFBIG";
    case EMFILE: return "EMFILE";
    case ENFILE: return "ENFILE";
    case ENAMETOOLONG: return "ENAMETOOLONG";
    case ENOTDIR: return "ENOTDIR";
    case ELOOP: return "ELOOP";
    case EROFS: return "EROFS";
    case EBADF: return "EBADF";
    case EAGAIN: return "EAGAIN";
    case ENOTSOCK: return "ENOTSOCK";
    case ENOTSUP: return "ENOTSUP";
    case EPROTO: return "EPROTO";
    case ENOSYS: return "ENOSYS";
    case ECONNREFUSED: return "ECONNREFUSED";
    case ECONNRESET: return "ECONNRESET";
    case ETIMEDOUT: return "ETIMEDOUT";
    case EPIPE: return "EPIPE";
    default: return "EUNKNOWN";
  }
}

}  // namespace hs::ipc
