#pragma once
// `--upstream NAME=URL[,KEY-FILE]` as ember-serve takes it: a name for logs and metrics, the
// OpenAI base URL as clients write it (http://host:8000/v1), and optionally a file holding the
// API key (so that the key is not in the process list or the shell history).
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "client/remote_generator.h"
#include "router.h"

namespace ember::openai {

struct UpstreamSpec {
  std::string name;
  std::string baseUrl;
  std::string keyFile;  // empty: no key
};

// Throws ember::Error naming what is wrong with the text.
UpstreamSpec parseUpstreamSpec(std::string_view text);

// The spec as RemoteServerOptions, with the key read from its file (trailing newline dropped).
// Throws ember::Error when the key file cannot be read or is empty.
RemoteServerOptions remoteOptionsFor(const UpstreamSpec& spec);

// ember-serve's router: the local generator first (named "local"; null when the server fronts
// remote upstreams only), then one RemoteGenerator per spec, without retries of their own (a
// refused request goes to another upstream at once). Throws ember::Error for a bad spec.
std::unique_ptr<Router> routerFor(const std::vector<std::string>& upstreamSpecs, Generator* local,
                                  const RouterOptions& options);

}  // namespace ember::openai
