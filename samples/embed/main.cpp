// Embedding sdfc: compile samples/axpy.sdfg (y = a * x + y) at run time, bind by name, call,
// check the result. Usage: embed path/to/axpy.sdfg
#include <cstdio>
#include <vector>

#include "sdfc/sdfc.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s axpy.sdfg\n", argv[0]);
    return 2;
  }
  try {
    sdfc::Program program = sdfc::Program::compile_file(argv[1]);
    std::printf("compiled %s into %s; arguments:", program.name().c_str(), program.library_path().c_str());
    for (auto& a : program.arguments()) std::printf(" %s (%s %s)", a.name.c_str(), a.kind.c_str(), a.dtype.c_str());
    std::printf("\n");
    const int n = 1000;
    std::vector<double> x(n), y(n, 1.0);
    double a = 3.0;
    for (int i = 0; i < n; ++i) x[i] = i;
    program.set_array("x", x.data(), x.size());
    program.set_array("y", y.data(), y.size());
    program.set_value("a", a);
    program.set_value("N", n);
    for (int step = 0; step < 10; ++step) program.call();  // a time loop: one init, ten calls
    for (int i = 0; i < n; ++i)
      if (y[i] != 1.0 + 10 * 3.0 * i) {
        std::fprintf(stderr, "wrong result at %d: %g\n", i, y[i]);
        return 1;
      }
    std::printf("y = 3 * x + y ten times: correct (y[999] = %g)\n", y[n - 1]);
  } catch (const sdfc::Error& e) {
    std::fprintf(stderr, "sdfc error: %s\n", e.what());
    return 1;
  }
  return 0;
}
