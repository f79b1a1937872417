#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>

#include "compiler/Cli.h"

int main(int argc, char** argv) {
  // Large inputs build large in-memory documents, and on virtual machines every 4 KiB page fault
  // is expensive: ask glibc's malloc for transparent huge pages (a tunable read only at process
  // start, hence the re-exec). Set SDFC_NO_HUGEPAGES=1 to opt out.
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (!std::getenv("SDFC_NO_HUGEPAGES") && (!tunables || !std::strstr(tunables, "hugetlb"))) {
    std::string value =
        tunables && *tunables ? std::string(tunables) + ":glibc.malloc.hugetlb=1" : "glibc.malloc.hugetlb=1";
    if (setenv("GLIBC_TUNABLES", value.c_str(), 1) == 0 && setenv("SDFC_NO_HUGEPAGES", "1", 1) == 0)
      execv("/proc/self/exe", argv);  // returns only on failure: then just run without
  }
  int rc = sdfc::run_cli(argc, argv, std::cout, std::cerr);
  // Output on a full disk or a closed pipe must not look like success.
  if (!std::cout.flush() && rc == 0) {
    std::cerr << "sdfc: error: cannot write to standard output\n";
    return 1;
  }
  return rc;
}
