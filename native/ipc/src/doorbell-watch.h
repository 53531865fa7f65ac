// Registers the doorbell and ring-control functions of the @hs/ipc addon (doorbell-watch.cc).
#pragma once

#include <napi.h>

namespace hs::ipc {

void RegisterDoorbellBindings(Napi::Env env, Napi::Object exports);

}  // namespace hs::ipc
