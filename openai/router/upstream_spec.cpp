#include "upstream_spec.h"

#include <cctype>
#include <fstream>
#include <sstream>

#include "ember/error.h"

namespace ember::openai {

UpstreamSpec parseUpstreamSpec(std::string_view text) {
  const auto usage = [&](const std::string& why) {
    return Error("--upstream '" + std::string(text) + "': " + why +
                 " (expected NAME=URL[,KEY-FILE], e.g. gpu1=http://10.0.0.5:8000/v1)");
  };
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) throw usage("no NAME= before the URL");
  UpstreamSpec spec;
  spec.name = text.substr(0, eq);
  for (const char c : spec.name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'))
      throw usage("the name may hold letters, digits, '-', '_' and '.' only");
  std::string_view rest = text.substr(eq + 1);
  const size_t comma = rest.find(',');
  spec.baseUrl = rest.substr(0, comma);
  if (comma != std::string_view::npos) {
    spec.keyFile = rest.substr(comma + 1);
    if (spec.keyFile.empty()) throw usage("nothing after the comma (the key file)");
  }
  if (spec.baseUrl.rfind("http://", 0) != 0 && spec.baseUrl.rfind("https://", 0) != 0)
    throw usage("the URL must start with http:// or https://");
  return spec;
}

RemoteServerOptions remoteOptionsFor(const UpstreamSpec& spec) {
  RemoteServerOptions o;
  o.name = spec.name;
  o.baseUrl = spec.baseUrl;
  if (!spec.keyFile.empty()) {
    std::ifstream in(spec.keyFile, std::ios::binary);
    if (!in) throw Error("upstream " + spec.name + ": cannot read the key file " + spec.keyFile);
    std::ostringstream text;
    text << in.rdbuf();
    std::string key = text.str();
    while (!key.empty() && (key.back() == '\n' || key.back() == '\r' || key.back() == ' '))
      key.pop_back();
    if (key.empty()) throw Error("upstream " + spec.name + ": the key file " + spec.keyFile + " is empty");
    o.apiKey = std::move(key);
  }
  return o;
}

std::unique_ptr<Router> routerFor(const std::vector<std::string>& upstreamSpecs, Generator* local,
                                  const RouterOptions& options) {
  std::vector<RouterUpstream> upstreams;
  if (local) upstreams.push_back(localUpstream(*local, "local"));
  for (const std::string& text : upstreamSpecs) {
    RemoteServerOptions remote = remoteOptionsFor(parseUpstreamSpec(text));
    remote.maxRetries = 0;
    upstreams.push_back(remoteUpstream(std::make_shared<RemoteGenerator>(std::move(remote))));
  }
  return std::make_unique<Router>(std::move(upstreams), options);
}

}  // namespace ember::openai
