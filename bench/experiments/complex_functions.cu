// Check (issue 41): the kernels' forms of NumPy's complex functions in sdfc/complex.h (asin, acos,
// atan, asinh, acosh, atanh: logarithmic forms on the device, std::complex on the host; exp2,
// expm1, log1p, round, sign, sign_numpy_2, isnan / isinf / isfinite: the same code on both)
// against the host's results, over a grid of points in all four quadrants, on both axes and near
// the branch points. Prints the largest relative difference per function and type; exits 1 if one
// is above 1e-12 (complex128) or 1e-5 (complex64).
// Standalone: nvcc -O2 -std=c++17 -arch=sm_90 -I runtime/include complex_functions.cu -o cf && ./cf
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "sdfc/complex.h"

constexpr int kFunctions = 12;
const char* const kNames[kFunctions] = {"asin", "acos",  "atan",  "asinh", "acosh", "atanh",
                                        "exp2", "expm1", "log1p", "round", "sign",  "sign_numpy_2"};

template <typename Z>
__host__ __device__ Z apply(int f, const Z& a) {
  switch (f) {
    case 0:
      return sdfc::rt::asin(a);
    case 1:
      return sdfc::rt::acos(a);
    case 2:
      return sdfc::rt::atan(a);
    case 3:
      return sdfc::rt::asinh(a);
    case 4:
      return sdfc::rt::acosh(a);
    case 5:
      return sdfc::rt::atanh(a);
    case 6:
      return sdfc::rt::exp2(a);
    case 7:
      return sdfc::rt::expm1(a);
    case 8:
      return sdfc::rt::log1p(a);
    case 9:
      return sdfc::rt::round(a);
    case 10:
      return sdfc::rt::sign(a);
    default:
      return sdfc::rt::sign_numpy_2(a);
  }
}

template <typename Z>
__global__ void kernel(const Z* z, Z* out, int* flags, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  for (int f = 0; f < kFunctions; ++f) out[i * kFunctions + f] = apply(f, z[i]);
  flags[i] = sdfc::rt::isnan(z[i]) * 1 + sdfc::rt::isinf(z[i]) * 2 + sdfc::rt::isfinite(z[i]) * 4;
}

template <typename T>
int check(const char* type, double tolerance) {
  using Z = sdfc::rt::complex<T>;
  std::vector<Z> z;
  const double values[] = {-3.0, -1.5, -1.0, -0.5, -1e-3, 0.0, 1e-3, 0.25, 0.5, 1.0, 1.5, 2.5};
  for (double re : values)
    for (double im : values) z.push_back(Z(static_cast<T>(re), static_cast<T>(im)));
  z.push_back(Z(static_cast<T>(NAN), T(1)));
  z.push_back(Z(static_cast<T>(INFINITY), T(0)));
  const int n = static_cast<int>(z.size());
  Z *dz, *dout;
  int* dflags;
  cudaMalloc(&dz, n * sizeof(Z));
  cudaMalloc(&dout, n * kFunctions * sizeof(Z));
  cudaMalloc(&dflags, n * sizeof(int));
  cudaMemcpy(dz, z.data(), n * sizeof(Z), cudaMemcpyHostToDevice);
  kernel<<<(n + 127) / 128, 128>>>(dz, dout, dflags, n);
  std::vector<Z> out(static_cast<std::size_t>(n) * kFunctions);
  std::vector<int> flags(static_cast<std::size_t>(n));
  cudaMemcpy(out.data(), dout, out.size() * sizeof(Z), cudaMemcpyDeviceToHost);
  cudaMemcpy(flags.data(), dflags, flags.size() * sizeof(int), cudaMemcpyDeviceToHost);
  if (cudaGetLastError() != cudaSuccess) {
    std::printf("CUDA error\n");
    return 1;
  }
  int bad = 0;
  for (int f = 0; f < kFunctions; ++f) {
    double worst = 0;
    for (int i = 0; i < n; ++i) {
      if (!std::isfinite(z[i].re) || !std::isfinite(z[i].im)) continue;
      Z want = apply(f, z[i]), got = out[static_cast<std::size_t>(i) * kFunctions + f];
      double scale = std::fmax(1.0, std::hypot(double(want.re), double(want.im)));
      double d = std::hypot(double(got.re - want.re), double(got.im - want.im)) / scale;
      if (!(d <= worst)) worst = d;  // NaN counts as worst
    }
    bool ok = worst <= tolerance;
    bad += !ok;
    std::printf("| %s | %-12s | max relative difference device / host %.3g | %s |\n", type, kNames[f], worst,
                ok ? "ok" : "TOO LARGE");
  }
  for (int i = 0; i < n; ++i) {
    int want = sdfc::rt::isnan(z[i]) * 1 + sdfc::rt::isinf(z[i]) * 2 + sdfc::rt::isfinite(z[i]) * 4;
    if (flags[static_cast<std::size_t>(i)] != want) {
      std::printf("| %s | predicates differ at point %d |\n", type, i);
      ++bad;
    }
  }
  cudaFree(dz);
  cudaFree(dout);
  cudaFree(dflags);
  return bad;
}

int main() {
  int bad = check<double>("complex128", 1e-12) + check<float>("complex64", 1e-5);
  std::printf(bad ? "FAILED: %d\n" : "all within tolerance\n", bad);
  return bad ? 1 : 0;
}
