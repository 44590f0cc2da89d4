// ThreadPool::physicalCores: the number of distinct physical cores among the CPUs this process
// may run on. Linux: sysfs topology (package id, core id) of each allowed CPU, else the
// "physical id"/"core id" lines of /proc/cpuinfo; elsewhere, or when both fail,
// std::thread::hardware_concurrency().
#include <algorithm>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "backend/cpu/thread_pool.h"

#if defined(__linux__)
#include <sched.h>
#endif

namespace ember::cpu {

namespace {

#if defined(__linux__)
bool readInt(const std::string& path, int* value) {
  std::ifstream in(path);
  return bool(in >> *value);
}

std::vector<int> allowedCpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  return cpus;
}

int coresFromSysfs(const std::vector<int>& cpus) {
  std::set<std::pair<int, int>> cores;
  for (int cpu : cpus) {
    const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    int package = 0, core = 0;
    if (!readInt(dir + "physical_package_id", &package) || !readInt(dir + "core_id", &core))
      return 0;
    cores.emplace(package, core);
  }
  return int(cores.size());
}

// /proc/cpuinfo has one paragraph per logical CPU ("processor", "physical id", "core id").
int coresFromCpuinfo(const std::vector<int>& cpus) {
  std::ifstream in("/proc/cpuinfo");
  if (!in) return 0;
  std::set<std::pair<int, int>> cores;
  int processor = -1, package = -1, core = -1;
  auto flush = [&] {
    if (processor >= 0 && package >= 0 && core >= 0 &&
        std::find(cpus.begin(), cpus.end(), processor) != cpus.end())
      cores.emplace(package, core);
    processor = package = core = -1;
  };
  auto valueOf = [](const std::string& line) {
    const size_t colon = line.find(':');
    try {
      return colon == std::string::npos ? -1 : std::stoi(line.substr(colon + 1));
    } catch (...) {
      return -1;
    }
  };
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty())
      flush();
    else if (line.rfind("processor", 0) == 0)
      processor = valueOf(line);
    else if (line.rfind("physical id", 0) == 0)
      package = valueOf(line);
    else if (line.rfind("core id", 0) == 0)
      core = valueOf(line);
  }
  flush();
  return int(cores.size());
}
#endif

}  // namespace

int ThreadPool::physicalCores() {
#if defined(__linux__)
  const std::vector<int> cpus = allowedCpus();
  if (!cpus.empty()) {
    if (const int n = coresFromSysfs(cpus); n > 0) return n;
    if (const int n = coresFromCpuinfo(cpus); n > 0) return n;
    return int(cpus.size());
  }
#endif
  return std::max(1, int(std::thread::hardware_concurrency()));
}

}  // namespace ember::cpu
