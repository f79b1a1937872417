// sdfc's embedding API: compile a DaCe SDFG into a shared library, load it, bind arguments by
// name (pointers with sizes and dtypes checked), call it, read its errors.
//
//   sdfc::Program p = sdfc::Program::compile_file("heat.sdfg");
//   p.set_array("u", u.data(), u.size());
//   p.set_value("N", 64);
//   p.call();                      // throws sdfc::Error with the program's message on failure
//
// One Program is not thread-safe; separate Programs are independent.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace sdfc {

/// Everything the API reports: invalid input (one line per problem), a failed build, a bad
/// binding, or an error the program itself reported during a call.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An Error about one argument's binding (wrong kind, dtype or size, not bound): names it, so that
/// callers binding from a file can point at its entry.
class ArgumentError : public Error {
 public:
  ArgumentError(std::string argument, const std::string& what) : Error(what), argument_(std::move(argument)) {}
  const std::string& argument() const { return argument_; }

 private:
  std::string argument_;
};

/// Compile options, named as on the command line.
struct Options {
  std::string target = "cpu";    ///< cpu (cuda and hip come with GPU code generation)
  std::string gpu_arch;          ///< "" = the target's default
  std::string transients;        ///< "" = as the file declares; scoped | persistent | pool | external
  int gpu_streams = 0;           ///< >= 0; ignored on the CPU
  bool use_cache = true;         ///< reuse identical builds from the cache ($SDFC_CACHE_DIR)
  std::string blas;              ///< "" or "pure": BLAS nodes as loops; "vendor": CBLAS / cuBLAS calls
  bool gpu_graph = false;        ///< GPU targets: replay the call's GPU work as a CUDA/HIP graph
  bool fuse_maps = false;        ///< merge chains of elementwise maps through transients into one map
  bool dependent_launch = true;  ///< CUDA, sm_90+: programmatic dependent launch of the kernels
};

/// One argument of a program, in DaCe's order.
struct ArgumentInfo {
  std::string name;
  std::string kind;                ///< "array", "scalar", "symbol" or "callback"
  std::string dtype;               ///< "float64", "int32", ... ("callback" for callbacks)
  std::vector<std::string> shape;  ///< arrays: extents as expressions of the symbols ("N", "-2 + M")
  /// Callbacks: the C type of the function pointer, as DaCe declares it ("void (*)(double const *,
  /// double)": arrays as pointers to their first element, scalars by value, results beyond one
  /// scalar through pointers after the arguments).
  std::string signature;
};

/// A compiled, loaded program.
class Program {
 public:
  /// Compiles an SDFG file (.sdfg / .sdfgz) or JSON text, then loads the library.
  static Program compile_file(const std::string& sdfg_path, const Options& options = {});
  static Program compile_string(const std::string& sdfg_json, const Options& options = {});
  /// Loads a library built by `sdfc compile`.
  static Program load(const std::string& library_path);

  Program(Program&&) noexcept;
  Program& operator=(Program&&) noexcept;
  ~Program();

  const std::string& name() const;
  const std::string& library_path() const;
  const std::vector<ArgumentInfo>& arguments() const;

  /// Binds an array argument to `count` elements of `dtype` at `data`. The dtype must match the
  /// program's; the size is checked against the shape when the program is called.
  void set_array(const std::string& name, void* data, const std::string& dtype, std::size_t count);
  template <typename T>
  void set_array(const std::string& name, T* data, std::size_t count) {
    set_array(name, static_cast<void*>(data), dtype_name<T>(), count);
  }
  /// Binds a scalar argument or a symbol. The value converts when the conversion is exact
  /// (2.0 to an int32 symbol is fine, 2.5 is an Error).
  void set_value(const std::string& name, double value);
  void set_value(const std::string& name, std::int64_t value);
  void set_value(const std::string& name, int value) { set_value(name, static_cast<std::int64_t>(value)); }
  /// Binds a complex64 or complex128 scalar argument (each part converts exactly, or Error).
  void set_value(const std::string& name, std::complex<double> value);
  /// Binds a callback argument (DaCe's `callback` dtype) to a function of the C type
  /// `arguments()[i].signature`; the program calls it on the calling thread, in program order.
  template <typename R, typename... A>
  void set_callback(const std::string& name, R (*function)(A...)) {
    set_callback_pointer(name, reinterpret_cast<void (*)()>(function));
  }
  void set_callback_pointer(const std::string& name, void (*function)());

  /// Calls the program. The first call (and a call with new symbol values) initializes it;
  /// workspaces for External transients are allocated by the Program. Throws Error for a missing
  /// or mismatched binding (the program is then not called) and for errors the program reports.
  void call();

  /// External workspaces (programs compiled with `transients = "external"`): the storage types
  /// that have one ("CPU_Heap", "CPU_Pinned", "GPU_Global"), in DaCe's names.
  const std::vector<std::string>& workspace_storages() const;
  /// Bytes the `storage` workspace needs for the bound symbol values (initializes the program for
  /// them, as a call would).
  std::size_t workspace_size(const std::string& storage);
  /// Makes the caller's buffer the `storage` workspace from now on; the Program stops using one
  /// of its own. The program checks it (null, smaller than needed, base not aligned to the
  /// largest element, host memory for GPU_Global or memory of another device): a rejected buffer
  /// throws Error and changes nothing. The buffer must outlive the Program or the next
  /// set_workspace; one buffer may serve several programs called one after the other.
  void set_workspace(const std::string& storage, void* ptr, std::size_t bytes);

  /// Sets the caller's stream (a cudaStream_t or hipStream_t; nullptr = the default stream) that
  /// GPU work is ordered against: with --gpu-streams 0 all work runs on it; with N >= 1 the
  /// internal streams fork from and join into it. Calls then return once their work is queued;
  /// the caller synchronizes the stream before reading results on the host. The program checks
  /// the stream (another device, a failing query, graph capture): a rejected stream throws Error
  /// and changes nothing; a CPU program rejects every stream. Changing it between calls orders the
  /// next call after the previous one. Handles that were never streams cannot be detected reliably.
  void set_external_stream(void* stream);

  /// Graph mode (--gpu-graph): how many times this program captured its GPU work (the whole call's
  /// and its graph segments') since it was initialized. A call whose argument bytes match one of
  /// the last few captures (up to 4 per call and per segment) replays it without capturing. 0 for
  /// programs that never captured (CPU programs, GPU programs without --gpu-graph).
  int graph_captures() const;

  /// The dtype name for a C++ type (float -> "float32", ...).
  template <typename T>
  static const char* dtype_name() {
    using U = std::remove_cv_t<T>;
    if constexpr (std::is_same_v<U, double>)
      return "float64";
    else if constexpr (std::is_same_v<U, float>)
      return "float32";
    else if constexpr (std::is_same_v<U, std::int64_t>)
      return "int64";
    else if constexpr (std::is_same_v<U, std::int32_t>)
      return "int32";
    else if constexpr (std::is_same_v<U, std::int16_t>)
      return "int16";
    else if constexpr (std::is_same_v<U, std::int8_t>)
      return "int8";
    else if constexpr (std::is_same_v<U, std::uint64_t>)
      return "uint64";
    else if constexpr (std::is_same_v<U, std::uint32_t>)
      return "uint32";
    else if constexpr (std::is_same_v<U, std::uint16_t>)
      return "uint16";
    else if constexpr (std::is_same_v<U, std::uint8_t>)
      return "uint8";
    else if constexpr (std::is_same_v<U, bool>)
      return "bool";
    else if constexpr (std::is_same_v<U, std::complex<double>>)
      return "complex128";
    else if constexpr (std::is_same_v<U, std::complex<float>>)
      return "complex64";
    else
      static_assert(sizeof(T) == 0, "unsupported element type");
  }

 private:
  struct Impl;
  explicit Program(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sdfc
