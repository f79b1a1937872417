// The corpus files sdfc does not support yet. Each must be refused with a user error (exit 1 on
// the command line) whose message names the construct — never compiled into a program that runs
// with a wrong result. A listed file that compiles fails its test, so that the list shrinks as the
// issues land (remove the entry then). Paths are relative to the corpus folder.
#pragma once

#include <string>
#include <vector>

namespace sdfc::test {

struct KnownUnsupported {
  const char* file;   ///< "case/file.sdfg"
  const char* error;  ///< a part of the refusal's message that names the construct
  int issue;          ///< the issue that brings it
};

inline const std::vector<KnownUnsupported>& known_unsupported() {
  static const char* kLibNode = "unsupported dataflow node type \"LibraryNode\"";
  static const char* kChrono = "no member named 'chrono' in namespace 'std'";
  static const char* kInitCode = "unsupported init_code for target \"cuda\"";
  static const char* kView = "unsupported data descriptor type \"ArrayView\"";
  static const char* kAssumption = "dtype=dace.int64, nonnegative=True)\": expected symbol($NAME, dtype=dace.TYPE)";
  static const std::vector<KnownUnsupported> list = {
      // GT4Py as it is (metrics code, Reduce library nodes, float symbols with assumptions, GPU init_code)
      {"gt4py_c2e_reduce_s/program.sdfg", kLibNode, 14},
      {"gt4py_c2e_reduce_s/program_nometrics.sdfg", kLibNode, 14},
      {"gt4py_c2e_reduce_s/program_gpu.sdfg", kInitCode, 14},
      {"gt4py_fo_chain_s/program.sdfg", kChrono, 14},
      {"gt4py_fo_chain_s/program_gpu.sdfg", kInitCode, 14},
      {"gt4py_lap3d_s/program.sdfg", kChrono, 14},
      {"gt4py_lap3d_s/program_gpu.sdfg", kInitCode, 14},
      {"gt4py_mixed_scalars_s/program.sdfg", kChrono, 14},
      {"gt4py_mixed_scalars_s/program_gpu.sdfg", kInitCode, 14},
      {"gt4py_shift3d_s/program.sdfg", kChrono, 14},
      {"gt4py_shift3d_s/program_gpu.sdfg", kInitCode, 14},
      {"gt4py_tuple_astype_s/program.sdfg", kChrono, 14},
      {"gt4py_tuple_astype_s/program_gpu.sdfg", kInitCode, 14},
      {"gt4py_v2c_e2c_s/program.sdfg", kLibNode, 14},
      {"gt4py_v2c_e2c_s/program_nometrics.sdfg", kLibNode, 14},
      {"gt4py_v2c_e2c_s/program_gpu.sdfg", kInitCode, 14},
      {"gt4py_vint_s/program.sdfg", kChrono, 14},
      {"gt4py_vint_s/program_gpu.sdfg", kInitCode, 14},
      {"gt4py_vscan_bwd_s/program.sdfg", kChrono, 14},
      {"gt4py_vscan_bwd_s/program_gpu.sdfg", kInitCode, 14},
      {"gt4py_where_s/program.sdfg", "malformed expression \"symbol($qmin, dtype=dace.float64, algebraic=True", 14},
      {"gt4py_where_s/program_nometrics.sdfg",
       "malformed expression \"symbol($qmin, dtype=dace.float64, algebraic=True", 14},
      {"gt4py_where_s/program_gpu.sdfg", kInitCode, 14},
      // DaCe's whole language (views, complex numbers, statement tasklets, library nodes, assumptions)
      {"fe_complex_rowmix_s/program.sdfg", kView, 15},
      {"fe_complex_rowmix_s/program_gpu.sdfg", "unsupported operand type complex128 for '*'", 15},
      {"fe_mandel_complex_s/program.sdfg", "unsupported statement 'if (abs(zz) <= 2.0):'", 15},
      {"fe_mandel_complex_s/program_gpu.sdfg", "unsupported statement 'if (abs(zz) <= 2.0):'", 15},
      {"fe_piecewise_tasklet_s/program.sdfg", "unsupported statement 'if (a < l):'", 15},
      {"fe_piecewise_tasklet_s/program_gpu.sdfg", "unsupported statement 'if (a < l):'", 15},
      {"fe_prefix_tmp_s/program.sdfg", kAssumption, 15},
      {"fe_prefix_tmp_s/program_gpu.sdfg", kAssumption, 15},
      {"fe_ragged_symbol_s/program_libnodes.sdfg", kLibNode, 15},
      {"fe_rowdot_views_s/program.sdfg", kView, 15},
      {"fe_rowdot_views_s/program_libnodes.sdfg", kView, 15},
      {"fe_softmax_keepdims_s/program.sdfg", kAssumption, 15},
      {"fe_softmax_keepdims_s/program_gpu.sdfg", kAssumption, 15},
      {"fe_transpose_reshape_s/program.sdfg", kView, 15},
      {"fe_transpose_reshape_s/program_libnodes.sdfg", kView, 15},
      {"fe_transpose_reshape_s/program_gpu.sdfg", kView, 15},
  };
  return list;
}

/// The entry for `file` ("case/file.sdfg"), or null when sdfc is expected to support it.
inline const KnownUnsupported* find_known_unsupported(const std::string& file) {
  for (auto& k : known_unsupported())
    if (file == k.file) return &k;
  return nullptr;
}

}  // namespace sdfc::test
