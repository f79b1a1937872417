#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "ir/Diagnostic.h"
#include "lang/PythonTasklet.h"
#include "runtime/include/sdfc/rt.h"

using namespace sdfc;

namespace {

using Types = std::map<std::string, DType>;
constexpr DType kF64 = DType::Float64;
constexpr DType kF32 = DType::Float32;
constexpr DType kI32 = DType::Int32;
constexpr DType kI64 = DType::Int64;
constexpr DType kBool = DType::Bool;

const char* const kPointer = "/nodes/0/nodes/3";

TaskletScope scope(Types inputs, Types outputs, Types symbols = {}) {
  TaskletScope s;
  s.inputs = std::move(inputs);
  s.outputs = std::move(outputs);
  s.symbols = std::move(symbols);
  return s;
}

// The usual test scope: float64 inputs x, y, z; int32 inputs a, b; outputs o (float64), k (int32),
// p (bool); int64 symbols N, i.
TaskletScope mixed() {
  return scope({{"x", kF64}, {"y", kF64}, {"z", kF64}, {"a", kI32}, {"b", kI32}},
               {{"o", kF64}, {"k", kI32}, {"p", kBool}}, {{"N", kI64}, {"i", kI64}});
}

std::string translate(const std::string& code, const TaskletScope& s = mixed()) {
  return translate_python_tasklet(code, s, "t.sdfg", kPointer);
}

// The diagnostic of translating `code`, which must fail.
Diagnostic error_of(const std::string& code, const TaskletScope& s = mixed()) {
  try {
    std::string out = translate(code, s);
    ADD_FAILURE() << "no error for:\n" << code << "\ngot:\n" << out;
  } catch (const UserError& e) {
    EXPECT_EQ(e.diagnostic().file, "t.sdfg");
    EXPECT_EQ(e.diagnostic().pointer, std::string(kPointer) + "/attributes/code");
    EXPECT_EQ(e.diagnostic().line, 0);
    return e.diagnostic();
  }
  return {};
}
std::string message_of(const std::string& code, const TaskletScope& s = mixed()) {
  return error_of(code, s).message;
}

// A scope with struct connectors: input s and output r of DaCe's argmin struct, float64 input x.
TaskletScope with_struct(DType* st) {
  *st = intern_struct(StructType{"_val_and_idx", {{"idx", kI32}, {"val", kF64}}, {}});
  TaskletScope s = scope({{"s", *st}, {"x", kF64}, {"a", kI64}}, {{"r", *st}, {"o", kF64}, {"k", kI32}});
  s.structs["_val_and_idx"] = *st;
  return s;
}

}  // namespace

TEST(PythonTasklet, StructsAreBuiltAssignedAndReadFieldByField) {
  DType st;
  TaskletScope s = with_struct(&st);
  // keywords in any order, cast to the fields' types, printed in field order
  EXPECT_EQ(translate("r = _val_and_idx(val=x, idx=a)", s), "r = _val_and_idx{static_cast<int>(a), x};\n");
  EXPECT_EQ(translate("r = _val_and_idx(a, 1)", s), "r = _val_and_idx{static_cast<int>(a), 1.0};\n");
  EXPECT_EQ(translate("o = s.val * 2\nk = s.idx", s), "o = s.val * 2;\nk = s.idx;\n");
  EXPECT_EQ(translate("t = s\nr = t", s), "_val_and_idx t = s;\nr = t;\n");
  EXPECT_EQ(translate("r = s if x > 0 else _val_and_idx(idx=0, val=x)", s), "r = (x > 0 ? s : _val_and_idx{0, x});\n");
}

TEST(PythonTasklet, StructMisusesAreNamed) {
  DType st;
  TaskletScope s = with_struct(&st);
  EXPECT_EQ(message_of("o = s.value", s),
            "struct '_val_and_idx' has no field 'value' (read in tasklet line 1); its fields: idx, val");
  EXPECT_EQ(message_of("r = _val_and_idx(val=x)", s),
            "field 'idx' of struct '_val_and_idx' is not given in tasklet line 1; give every field");
  EXPECT_EQ(message_of("r = _val_and_idx(val=x, idx=a, cnt=1)", s),
            "struct '_val_and_idx' has no field 'cnt' (in tasklet line 1)");
  EXPECT_EQ(message_of("o = s + 1", s),
            "a value of struct type '_val_and_idx' is used by 'a binary operator' in tasklet line 1; struct values "
            "can be built (`_val_and_idx(...)`), assigned, and read field by field (`x.idx`)");
  EXPECT_EQ(message_of("o = min(s, x)", s),
            "a value of struct type '_val_and_idx' is used by 'min' in tasklet line 1; struct values can be built "
            "(`_val_and_idx(...)`), assigned, and read field by field (`x.idx`)");
  EXPECT_EQ(message_of("o = s", s), "tasklet line 1: cannot assign a _val_and_idx value to 'o' of type float64");
  EXPECT_EQ(message_of("r = x", s), "tasklet line 1: cannot assign a float64 value to 'r' of type _val_and_idx");
}

// ---- the tasklets of the DaCe corpus ----------------------------------------------------------

TEST(PythonTasklet, CorpusTasklets) {
  EXPECT_EQ(
      translate("o = (0.25 * ((a + (2.0 * b)) + c))", scope({{"a", kF64}, {"b", kF64}, {"c", kF64}}, {{"o", kF64}})),
      "o = 0.25 * (a + 2.0 * b + c);\n");
  EXPECT_EQ(translate("o = math.log((v + 1.0))", scope({{"v", kF64}}, {{"o", kF64}})), "o = std::log(v + 1.0);\n");
  EXPECT_EQ(translate("c = a\nt = a", scope({{"a", kI32}}, {{"c", kI32}, {"t", kI32}})), "c = a;\nt = a;\n");
  EXPECT_EQ(translate("o = 0", scope({}, {{"o", kI32}})), "o = 0;\n");
  EXPECT_EQ(translate("u = ((t * 2) - 1)", scope({{"t", kI32}}, {{"u", kI32}})), "u = t * 2 - 1;\n");
  EXPECT_EQ(translate("o = ((a * P) + (i * 0.5))", scope({{"a", kF32}}, {{"o", kF32}}, {{"P", kI32}, {"i", kI64}})),
            "o = a * P + i * 0.5;\n");
  EXPECT_EQ(translate("__out = (__in1 + dace.float32(0.25))", scope({{"__in1", kF32}}, {{"__out", kF32}})),
            "__out = __in1 + 0.25f;\n");
  TaskletScope diffusion = scope(
      {{"c", kF32}, {"kap", kF32}, {"x0", kF32}, {"x1", kF32}, {"y0", kF32}, {"y1", kF32}, {"z0", kF32}, {"z1", kF32}},
      {{"o", kF32}});
  EXPECT_EQ(translate("o = (c + (kap * (((x1 - x0) + (y1 - y0)) + (z1 - z0))))", diffusion),
            "o = c + kap * (x1 - x0 + (y1 - y0) + (z1 - z0));\n");
  EXPECT_EQ(translate("o = (c + (0.1 * ((((n + s) + w) + e) - (4.0 * c))))",
                      scope({{"c", kF64}, {"n", kF64}, {"s", kF64}, {"w", kF64}, {"e", kF64}}, {{"o", kF64}})),
            "o = c + 0.1 * (n + s + w + e - 4.0 * c);\n");
}

// ---- statements -------------------------------------------------------------------------------

TEST(PythonTasklet, StatementsCommentsAndBlankLines) {
  EXPECT_EQ(translate("o = x  # first\n\n# only a comment\nk = a; p = True;\n"), "o = x;\nk = a;\np = true;\n");
  EXPECT_EQ(translate(""), "");
  EXPECT_EQ(translate("pass\n# nothing"), "");
  EXPECT_EQ(translate("o = x\r\nk = a\r\n"), "o = x;\nk = a;\n");
}

TEST(PythonTasklet, LineContinuations) {
  EXPECT_EQ(translate("o = (x +  # the first term\n     y)"), "o = x + y;\n");
  EXPECT_EQ(translate("o = x + \\\n    y\nk = a"), "o = x + y;\nk = a;\n");
  EXPECT_EQ(translate("o = max(x,\n        y)"), "o = sdfc::rt::max(x, y);\n");
}

TEST(PythonTasklet, CommonIndentationIsAllowed) {
  EXPECT_EQ(translate("    o = x\n    k = a\n"), "o = x;\nk = a;\n");
  EXPECT_EQ(translate("o = x;   k = a"), "o = x;\nk = a;\n");
}

TEST(PythonTasklet, TemporariesAreDeclaredWithTheirType) {
  EXPECT_EQ(translate("t = x * 2\no = t + 1"), "double t = x * 2;\no = t + 1;\n");
  EXPECT_EQ(translate("t = a * 2\nk = t"), "int t = a * 2;\nk = t;\n");
  EXPECT_EQ(translate("t = x > 0\np = t"), "bool t = x > 0;\np = t;\n");
  EXPECT_EQ(translate("t = 1\nt = 2\nk = t"), "int t = 1;\nt = 2;\nk = t;\n");
}

TEST(PythonTasklet, TemporaryThatChangesTypeGetsANewVariable) {
  // Python's `t` becomes a float; the int variable cannot hold it.
  EXPECT_EQ(translate("t = 1\nt = t + 0.5\no = t"), "int t = 1;\ndouble t_1 = t + 0.5;\no = t_1;\n");
  EXPECT_EQ(translate("t = a\nt /= 2\no = t"), "int t = a;\ndouble t_1 = static_cast<double>(t) / 2;\no = t_1;\n");
  // The new name avoids names of the code.
  EXPECT_EQ(translate("t = 1\nt_1 = 2\nt = 0.5\no = t + t_1"),
            "int t = 1;\nint t_1 = 2;\ndouble t_2 = 0.5;\no = t_2 + t_1;\n");
}

TEST(PythonTasklet, TemporariesAvoidCppKeywords) {
  EXPECT_EQ(translate("new = x\ndouble = new * 2\no = double"),
            "double new_1 = x;\ndouble double_1 = new_1 * 2;\no = double_1;\n");
  EXPECT_EQ(translate("std = x\no = math.sqrt(std)"), "double std_1 = x;\no = std::sqrt(std_1);\n");
}

TEST(PythonTasklet, AugmentedAssignment) {
  EXPECT_EQ(translate("o = x\no += y\no -= x - y\no *= 2\no /= 4"), "o = x;\no += y;\no -= x - y;\no *= 2;\no /= 4;\n");
  EXPECT_EQ(translate("o = x\no //= 2\no %= 3\no **= 2"),
            "o = x;\no = sdfc::rt::floordiv(o, 2);\no = sdfc::rt::floormod(o, 3);\no = sdfc::rt::pow(o, 2);\n");
  EXPECT_EQ(translate("k = a\nk &= 7\nk |= b\nk ^= 1\nk <<= 2\nk >>= 1"),
            "k = a;\nk &= 7;\nk |= b;\nk ^= 1;\nk <<= 2;\nk >>= 1;\n");
  EXPECT_EQ(translate("t = 0\nt += a\nk = t"), "int t = 0;\nt += a;\nk = t;\n");
}

TEST(PythonTasklet, AugmentedAssignmentToAnIntegerOutputTruncates) {
  // Python computes 7 / 2 == 3.5 and stores it into an int32 output.
  EXPECT_EQ(translate("k = a\nk /= 2"), "k = a;\nk = static_cast<int>(static_cast<double>(k) / 2);\n");
  EXPECT_EQ(translate("k = a\nk += 0.5"), "k = a;\nk = static_cast<int>(k + 0.5);\n");
}

TEST(PythonTasklet, FloatToIntegerOutputIsAnExplicitCast) {
  EXPECT_EQ(translate("k = x * 2"), "k = static_cast<int>(x * 2);\n");
  EXPECT_EQ(translate("k = a * 2"), "k = a * 2;\n");
  EXPECT_EQ(translate("o = a"), "o = a;\n");
  EXPECT_EQ(translate("p = x"), "p = x;\n");
}

TEST(PythonTasklet, Subscripts) {
  TaskletScope s = scope({{"A", kF64}}, {{"B", kF64}}, {{"i", kI64}});
  EXPECT_EQ(translate("B[i] = A[i + 1] * 2.0", s), "B[i] = A[i + 1] * 2.0;\n");
  EXPECT_EQ(translate("B[0] += A[i]", s), "B[0] += A[i];\n");
  EXPECT_EQ(translate("t = A[2 * i]\nB[i] = t", s), "double t = A[2 * i];\nB[i] = t;\n");
}

// ---- expressions ------------------------------------------------------------------------------

TEST(PythonTasklet, Literals) {
  EXPECT_EQ(translate("o = 1e-05 * x + 1. + .5"), "o = 1e-05 * x + 1. + .5;\n");
  EXPECT_EQ(translate("t = 3000000000\nt2 = 2 + 3000000000\nt3 = 2147483647"),
            "int64_t t = 3000000000;\nint64_t t2 = 2 + 3000000000;\nint t3 = 2147483647;\n");
  EXPECT_EQ(translate("p = True\np = False"), "p = true;\np = false;\n");
}

TEST(PythonTasklet, TrueDivision) {
  EXPECT_EQ(translate("o = a / b"), "o = static_cast<double>(a) / b;\n");
  EXPECT_EQ(translate("o = (a + b) / 2"), "o = static_cast<double>(a + b) / 2;\n");
  EXPECT_EQ(translate("o = 1 / a"), "o = 1.0 / a;\n");
  EXPECT_EQ(translate("o = x / 2"), "o = x / 2;\n");
  EXPECT_EQ(translate("t = a / b\no = t"), "double t = static_cast<double>(a) / b;\no = t;\n");
  // float32 / int stays float32, as in C++
  EXPECT_EQ(translate("t = f / a\no = t", scope({{"f", kF32}, {"a", kI32}}, {{"o", kF64}})),
            "float t = f / a;\no = t;\n");
}

TEST(PythonTasklet, FloorDivisionModuloAndPower) {
  EXPECT_EQ(translate("k = a // b"), "k = sdfc::rt::floordiv(a, b);\n");
  EXPECT_EQ(translate("k = a % b"), "k = sdfc::rt::floormod(a, b);\n");
  EXPECT_EQ(translate("o = x // 2 + x % 2.0"), "o = sdfc::rt::floordiv(x, 2) + sdfc::rt::floormod(x, 2.0);\n");
  EXPECT_EQ(translate("k = a ** 2"), "k = sdfc::rt::pow(a, 2);\n");
  EXPECT_EQ(translate("o = -x ** 2"), "o = -sdfc::rt::pow(x, 2);\n");
  EXPECT_EQ(translate("o = 2 ** 0.5"), "o = sdfc::rt::pow(2, 0.5);\n");
  // A negative integer power is a float (2 ** -1 == 0.5).
  EXPECT_EQ(translate("o = a ** -1"), "o = sdfc::rt::pow(static_cast<double>(a), -1);\n");
  EXPECT_EQ(translate("o = 2 ** -1"), "o = sdfc::rt::pow(2.0, -1);\n");
}

TEST(PythonTasklet, NarrowIntegersComputeAsInt) {
  TaskletScope s = scope({{"c", DType::Int8}, {"d", DType::Int8}}, {{"o", DType::Int8}});
  // rt::floordiv(int8_t, int8_t) would compute in int8_t; Python and C++ operators compute in int.
  EXPECT_EQ(translate("o = c // d", s), "o = sdfc::rt::floordiv(static_cast<int>(c), d);\n");
  EXPECT_EQ(translate("t = c + d\no = t", s), "int t = c + d;\no = t;\n");
  EXPECT_EQ(translate("t = max(c, d)\no = t", s), "int8_t t = sdfc::rt::max(c, d);\no = t;\n");
}

TEST(PythonTasklet, MixedSignednessComputesInInt64) {
  TaskletScope s = scope({{"a", kI32}, {"u", DType::UInt32}}, {{"o", kI64}, {"p", kBool}});
  EXPECT_EQ(translate("o = a - u", s), "o = static_cast<int64_t>(a) - u;\n");
  EXPECT_EQ(translate("p = a < u", s), "p = static_cast<int64_t>(a) < u;\n");
  EXPECT_EQ(translate("o = min(a, u)", s), "o = sdfc::rt::min(static_cast<int64_t>(a), u);\n");
  EXPECT_EQ(translate("o = u + u", s), "o = u + u;\n");
}

TEST(PythonTasklet, PromotionFollowsPython) {
  TaskletScope s = scope({{"f", kF32}, {"g", kF32}, {"d", kF64}, {"a", kI32}, {"l", kI64}}, {{"o", kF64}});
  EXPECT_EQ(translate("t = f * g\no = t", s), "float t = f * g;\no = t;\n");
  EXPECT_EQ(translate("t = f * d\no = t", s), "double t = f * d;\no = t;\n");
  EXPECT_EQ(translate("t = f * a\no = t", s), "float t = f * a;\no = t;\n");
  EXPECT_EQ(translate("t = f * 2.0\no = t", s), "double t = f * 2.0;\no = t;\n");
  EXPECT_EQ(translate("t = a * l\no = t", s), "int64_t t = a * l;\no = t;\n");
  EXPECT_EQ(translate("t = a * 2\no = t", s), "int t = a * 2;\no = t;\n");
  EXPECT_EQ(translate("t = True + True\no = t", s), "int t = true + true;\no = t;\n");
}

TEST(PythonTasklet, ParenthesesFollowCppPrecedence) {
  EXPECT_EQ(translate("o = x - (y - z)"), "o = x - (y - z);\n");
  EXPECT_EQ(translate("o = (x - y) - z"), "o = x - y - z;\n");
  EXPECT_EQ(translate("o = x + (y + z)"), "o = x + (y + z);\n");  // no reassociation of float sums
  EXPECT_EQ(translate("o = x * (y / z)"), "o = x * (y / z);\n");
  EXPECT_EQ(translate("o = -(-x)"), "o = -(-x);\n");
  EXPECT_EQ(translate("o = x - -y"), "o = x - -y;\n");
  EXPECT_EQ(translate("o = -(x + y)"), "o = -(x + y);\n");
  // Python's `&` binds tighter than `==`; C++'s does not.
  EXPECT_EQ(translate("p = a & b == 1"), "p = (a & b) == 1;\n");
  // Parentheses that GCC's -Wparentheses asks for.
  EXPECT_EQ(translate("k = ~a & 255 | b << 2"), "k = (~a & 255) | (b << 2);\n");
  EXPECT_EQ(translate("k = a + b << 2"), "k = (a + b) << 2;\n");
  EXPECT_EQ(translate("p = (x < y) == (y < z)"), "p = (x < y) == (y < z);\n");
}

TEST(PythonTasklet, ShiftsComputeInTheWiderType) {
  TaskletScope s = scope({{"a", kI32}}, {{"o", kI64}}, {{"n", kI64}});
  EXPECT_EQ(translate("o = 1 << n", s), "o = static_cast<int64_t>(1) << n;\n");
  EXPECT_EQ(translate("o = a >> 1", s), "o = a >> 1;\n");
}

TEST(PythonTasklet, BooleanOperators) {
  EXPECT_EQ(translate("p = x > 0 and y > 0 or not z"), "p = (x > 0 && y > 0) || !z;\n");
  EXPECT_EQ(translate("p = 0 <= x < 1"), "p = 0 <= x && x < 1;\n");
  EXPECT_EQ(translate("p = not (x > 0)"), "p = !(x > 0);\n");
  EXPECT_EQ(translate("p = x and y"), "p = x && y;\n");  // only the truth value is stored
  // `or` returns an operand in Python.
  EXPECT_EQ(translate("o = x or y"), "o = (x ? x : y);\n");
  EXPECT_EQ(translate("o = x and y and z"), "o = (x ? (y ? z : y) : x);\n");
  EXPECT_EQ(translate("o = x or a"), "o = (x ? x : a);\n");
  EXPECT_EQ(translate("t = x and 5\no = t"), "double t = (x ? 5 : x);\no = t;\n");
  EXPECT_EQ(translate("t = a or 0.5\no = t"), "double t = (a ? a : 0.5);\no = t;\n");
}

TEST(PythonTasklet, TruthValuesOfNumbersCompareWithZero) {
  EXPECT_EQ(translate("p = a * b"), "p = a * b != 0;\n");
  EXPECT_EQ(translate("o = 1 if a * b else 0"), "o = (a * b != 0 ? 1 : 0);\n");
  EXPECT_EQ(translate("p = not a * b"), "p = !(a * b != 0);\n");
  EXPECT_EQ(translate("p = x * y and a"), "p = x * y != 0 && a;\n");
  EXPECT_EQ(translate("p = (not x) == y"), "p = (!x) == y;\n");
  EXPECT_EQ(translate("k = ~True"), "k = ~static_cast<int>(true);\n");  // -2, as in Python
}

TEST(PythonTasklet, ConditionalExpression) {
  EXPECT_EQ(translate("o = x if x > 0 else 0"), "o = (x > 0 ? x : 0);\n");
  EXPECT_EQ(translate("o = x if a else y"), "o = (a ? x : y);\n");
  EXPECT_EQ(translate("k = a if a > b else b"), "k = (a > b ? a : b);\n");
  EXPECT_EQ(translate("o = 1 if x > 0 else -1 if x < 0 else 0"), "o = (x > 0 ? 1 : (x < 0 ? -1 : 0));\n");
}

TEST(PythonTasklet, Casts) {
  TaskletScope s =
      scope({{"x", kF64}, {"a", kI32}}, {{"o", kF64}, {"f", kF32}, {"k", kI32}, {"l", kI64}, {"p", kBool}});
  EXPECT_EQ(translate("f = dace.float32(x)", s), "f = static_cast<float>(x);\n");
  EXPECT_EQ(translate("f = np.float32(x) + numpy.float32(a)", s),
            "f = static_cast<float>(x) + static_cast<float>(a);\n");
  EXPECT_EQ(translate("o = dace.float64(x)", s), "o = x;\n");
  EXPECT_EQ(translate("o = float(a)", s), "o = static_cast<double>(a);\n");
  EXPECT_EQ(translate("o = dace.float64(1) + dace.float32(3)", s), "o = 1.0 + 3.0f;\n");
  EXPECT_EQ(translate("l = int(x)", s), "l = static_cast<int64_t>(x);\n");
  EXPECT_EQ(translate("k = dace.int32(x)", s), "k = static_cast<int>(x);\n");
  EXPECT_EQ(translate("p = bool(x)", s), "p = static_cast<bool>(x);\n");
  EXPECT_EQ(translate("p = np.bool_(a)", s), "p = static_cast<bool>(a);\n");
  EXPECT_EQ(translate("l = dace.uint64(a)", s), "l = static_cast<uint64_t>(a);\n");
}

TEST(PythonTasklet, MathFunctions) {
  EXPECT_EQ(translate("o = math.sqrt(x) + np.exp(y) + sin(z) + numpy.tanh(x) + dace.cos(y)"),
            "o = std::sqrt(x) + std::exp(y) + std::sin(z) + std::tanh(x) + std::cos(y);\n");
  EXPECT_EQ(translate("o = math.atan2(y, x) + math.hypot(x, y) + np.arcsin(x) + math.log1p(x)"),
            "o = std::atan2(y, x) + std::hypot(x, y) + std::asin(x) + std::log1p(x);\n");
  EXPECT_EQ(translate("p = math.isnan(x) or np.isinf(y)"), "p = std::isnan(x) || std::isinf(y);\n");
  // float32 stays float32; integers compute in double
  TaskletScope s = scope({{"f", kF32}, {"a", kI32}, {"d", kF64}}, {{"o", kF64}});
  EXPECT_EQ(translate("t = math.sqrt(f)\no = t", s), "float t = std::sqrt(f);\no = t;\n");
  EXPECT_EQ(translate("t = math.sqrt(a)\no = t", s), "double t = std::sqrt(a);\no = t;\n");
  EXPECT_EQ(translate("t = math.atan2(f, f)\no = t", s), "float t = std::atan2(f, f);\no = t;\n");
  EXPECT_EQ(translate("t = math.atan2(f, d)\no = t", s), "double t = std::atan2(f, d);\no = t;\n");
}

TEST(PythonTasklet, RuntimeHelperFunctions) {
  EXPECT_EQ(translate("o = max(x, y, 0) + min(x, 1)"), "o = sdfc::rt::max(x, y, 0) + sdfc::rt::min(x, 1);\n");
  EXPECT_EQ(translate("o = np.maximum(x, y)"), "o = sdfc::rt::max(x, y);\n");
  EXPECT_EQ(translate("t = abs(a)\nk = t"), "int t = sdfc::rt::abs(a);\nk = t;\n");
  EXPECT_EQ(translate("o = abs(x) + math.fabs(a)"), "o = sdfc::rt::abs(x) + std::fabs(a);\n");
  EXPECT_EQ(translate("t = math.floor(x)\nu = math.ceil(a)\no = t + u"),
            "double t = sdfc::rt::floor(x);\nint u = sdfc::rt::ceil(a);\no = t + u;\n");
  EXPECT_EQ(translate("k = pow(a, 3)"), "k = sdfc::rt::pow(a, 3);\n");
  // math.pow is always a float
  EXPECT_EQ(translate("t = math.pow(a, 3)\no = t"), "double t = std::pow(a, 3);\no = t;\n");
}

TEST(PythonTasklet, Constants) {
  EXPECT_EQ(translate("o = math.pi * x + np.e"), "o = 3.141592653589793 * x + 2.718281828459045;\n");
  EXPECT_EQ(translate("o = pi + numpy.pi + dace.pi"),
            "o = 3.141592653589793 + 3.141592653589793 + 3.141592653589793;\n");
  EXPECT_EQ(translate("o = math.inf"), "o = HUGE_VAL;\n");
  // A connector named like a constant wins, as in Python.
  EXPECT_EQ(translate("o = pi * e", scope({{"pi", kF64}, {"e", kF64}}, {{"o", kF64}})), "o = pi * e;\n");
}

TEST(PythonTasklet, SymbolsAndOutputsCanBeRead) {
  EXPECT_EQ(translate("o = x * N\no = o + i"), "o = x * N;\no = o + i;\n");
}

// ---- errors -----------------------------------------------------------------------------------

TEST(PythonTasklet, ErrorImport) {
  EXPECT_EQ(message_of("import math\no = math.sqrt(x)"),
            "tasklet line 1: unsupported statement 'import math'; math functions such as math.sqrt need no import");
  EXPECT_EQ(message_of("o = x\nfrom math import sqrt"),
            "tasklet line 2: unsupported statement 'from math import sqrt'; math functions such as math.sqrt need no "
            "import");
}

TEST(PythonTasklet, ErrorUnknownName) {
  EXPECT_EQ(message_of("o = x\no = zz * 2"),
            "unknown name 'zz' in tasklet line 2; expected a connector, a symbol or a known constant");
  EXPECT_EQ(message_of("o = math.e2"),
            "unknown name 'math.e2' in tasklet line 1; expected a connector, a symbol or a known constant");
  // `t` is not defined before it is updated
  EXPECT_EQ(message_of("t += 1"),
            "unknown name 't' in tasklet line 1; expected a connector, a symbol or a known constant");
}

TEST(PythonTasklet, ErrorUnknownFunction) {
  EXPECT_EQ(message_of("o = foo(x)"),
            "unsupported function 'foo' in tasklet line 1; expected a math function (such as math.sqrt or exp), "
            "abs, min, max, pow or a cast (such as float or dace.float32)");
  EXPECT_EQ(message_of("o = frexp(x)").substr(0, 47), "unsupported function 'frexp' in tasklet line 1;");
}

TEST(PythonTasklet, WhileBreakAndContinue) {
  // while loops, and break/continue in while and for loops (C++'s continue in the counter loop
  // steps the counter, as Python's steps the range).
  EXPECT_EQ(translate("t = x\nwhile t < 100.0:\n  t = t * 2\n  if t > 50.0:\n    break\no = t"),
            "double t{};\n"
            "t = x;\n"
            "while (t < 100.0) {\n"
            "  t = t * 2;\n"
            "  if (t > 50.0) {\n"
            "    break;\n"
            "  }\n"
            "}\n"
            "o = t;\n");
  std::string code = translate("s = 0.0\nfor m in range(10):\n  if m % 2 == 0:\n    continue\n  s += x\no = s");
  EXPECT_NE(code.find("  if (sdfc::rt::floormod(m, 2) == 0) {\n    continue;\n  }\n"), std::string::npos) << code;
}

TEST(PythonTasklet, ErrorCompoundStatements) {
  EXPECT_EQ(message_of("o = x\nbreak"),
            "tasklet line 2: unsupported statement 'break'; 'break' belongs inside a 'for' or 'while' loop of the "
            "tasklet");
  EXPECT_EQ(message_of("if x > 0:\n  continue"),
            "tasklet line 2: unsupported statement 'continue'; 'continue' belongs inside a 'for' or 'while' loop of "
            "the tasklet");
  EXPECT_EQ(message_of("while x:\n  o = x\nelse:\n  o = y"), "tasklet line 3: 'else' without an 'if' before it");
  EXPECT_EQ(message_of("def f(v):\n  return v"),
            "tasklet line 1: unsupported statement 'def f(v):'; functions cannot be defined in a tasklet");
  EXPECT_EQ(message_of("o = x\nreturn o"),
            "tasklet line 2: unsupported statement 'return o'; a tasklet returns values by assigning its output "
            "connectors");
  EXPECT_EQ(
      message_of("math.sqrt(x)"),
      "tasklet line 1: unsupported statement 'math.sqrt(x)'; python tasklets may contain assignments ('name = "
      "expr', 'name += expr', 'out[i] = expr'), if/elif/else, 'for name in range(...)', 'while condition' and, in "
      "loops, break and continue");
  // Control flow that is not DaCe's statement form.
  EXPECT_EQ(message_of("if x > 0: o = x"),
            "tasklet line 1: 'if x > 0: o = x': put the body of 'if' on the lines after it, indented");
  EXPECT_EQ(message_of("if x > 0:\no = x"),
            "tasklet line 1: 'if x > 0:' needs an indented block on the lines after it");
  EXPECT_EQ(message_of("o = x\nelse:\n  o = y"), "tasklet line 2: 'else' without an 'if' before it");
  EXPECT_EQ(message_of("for j in reversed(3):\n  o = x"),
            "tasklet line 1: unsupported loop over 'reversed(3)'; loops in tasklets are 'for NAME in range(...):'");
  EXPECT_EQ(message_of("for j in range(N, 0, -i):\n  o = x"),
            "tasklet line 1: the step of range() must be a nonzero integer constant, not '-i'");
  EXPECT_EQ(message_of("for j in range(x):\n  o = x"), "tasklet line 1: range() takes integers, got float64 'x'");
  EXPECT_EQ(message_of("for a in range(3):\n  o = x"),
            "tasklet line 1: the loop variable 'a' is a connector or a symbol; use a new name");
  EXPECT_EQ(message_of("if x > 0:\n  t = 1\nelse:\n  t = 1.5\no = t"),
            "temporary 't' is assigned values of types int32 and float64 in a tasklet with control flow; sdfc needs "
            "one type per temporary there (convert the values, e.g. float(...))");
}

TEST(PythonTasklet, ControlFlowStatements) {
  // DaCe's frontend writes if/elif/else blocks and loops over range() into tasklets; temporaries
  // are declared once, before the first statement, so that they outlive the blocks.
  EXPECT_EQ(
      translate("if x < y:\n    t = x\n    k = -1\nelif x > z:\n    t = z\n    k = 1\nelse:\n    t = 0.0\n"
                "    k = 0\no = t"),
      "double t{};\n"
      "if (x < y) {\n  t = x;\n  k = -1;\n} else if (x > z) {\n  t = z;\n  k = 1;\n} else {\n  t = 0.0;\n  k = 0;\n}\n"
      "o = t;\n");
  EXPECT_EQ(translate("s = 0.0\nfor j in range(1, N, 2):\n    if j % 3 == 0:\n        s += x\no = s + j"),
            "int64_t j{};\ndouble s{};\ns = 0.0;\n"
            "for (int64_t __for_j = 1; __for_j < N; __for_j += 2) {\n  j = __for_j;\n"
            "  if (sdfc::rt::floormod(j, 3) == 0) {\n    s += x;\n  }\n}\no = s + j;\n");
  EXPECT_EQ(translate("k = 0\nfor j in range(5, 0, -1):\n    k = k + a", scope({{"a", kI32}}, {{"k", kI32}})),
            "int64_t j{};\nk = 0;\nfor (int64_t __for_j = 5; __for_j > 0; __for_j += -1) {\n  j = __for_j;\n"
            "  k = k + a;\n}\n");
}

TEST(PythonTasklet, ErrorAssignmentToInputOrSymbol) {
  EXPECT_EQ(message_of("o = x\nx = 1"),
            "tasklet line 2: cannot assign to input connector 'x'; input connectors are read-only (assign to an "
            "output connector or a new temporary)");
  EXPECT_EQ(message_of("x += 1"),
            "tasklet line 1: cannot assign to input connector 'x'; input connectors are read-only (assign to an "
            "output connector or a new temporary)");
  EXPECT_EQ(message_of("N = 1"), "tasklet line 1: cannot assign to symbol 'N'; symbols are read-only in a tasklet");
  EXPECT_EQ(message_of("t[0] = 1"),
            "tasklet line 1: cannot assign to 't[0]'; only output connectors can be subscripted");
  EXPECT_EQ(message_of("o + 1 = x"),
            "tasklet line 1: cannot assign to 'o + 1'; expected an output connector, an element of one or a "
            "temporary name");
}

TEST(PythonTasklet, ErrorTupleAndChainedAssignment) {
  EXPECT_EQ(message_of("o, k = x, a"),
            "tasklet line 1: tuple assignment 'o, k = x, a' is not supported; assign each target in its own statement");
  EXPECT_EQ(message_of("o = x, y"),
            "tasklet line 1: tuple value in 'o = x, y' is not supported; assign one value per statement");
  EXPECT_EQ(message_of("o = t = x"),
            "tasklet line 1: chained assignment 'o = t = x' is not supported; assign each target in its own "
            "statement");
}

TEST(PythonTasklet, ErrorSyntax) {
  EXPECT_EQ(message_of("o = x\no = (x + )"), "tasklet line 2: syntax error at column 10: unexpected character ')'");
  EXPECT_EQ(message_of("o = x\n\no = (x +\n  1"), "tasklet line 3: syntax error at column 5: '(' was never closed");
  EXPECT_EQ(message_of("o = x)"), "tasklet line 1: syntax error at column 6: unmatched ')'");
  EXPECT_EQ(message_of("o = (x]"), "tasklet line 1: syntax error at column 7: closing ']' does not match '('");
  EXPECT_EQ(message_of("o = x +"),
            "tasklet line 1: syntax error at column 8: expected an expression but found the end of the text");
  EXPECT_EQ(message_of("o = 'abc'"), "tasklet line 1: string literals are not supported in python tasklets");
  EXPECT_EQ(message_of("o = x\n  k = a"), "tasklet line 2: unexpected indentation");
}

TEST(PythonTasklet, ErrorUnsupportedOperands) {
  EXPECT_EQ(message_of("k = x & 1"),
            "unsupported operand type float64 for '&' in tasklet line 1; the operator needs integers");
  EXPECT_EQ(message_of("k = ~x"),
            "unsupported operand type float64 for '~' in tasklet line 1; the operator needs integers");
  EXPECT_EQ(message_of("o = c * 2", scope({{"c", DType::Complex128}}, {{"o", kF64}})),
            "tasklet line 1: cannot assign a complex128 value to 'o' of type float64");
  EXPECT_EQ(message_of("o = c < 2", scope({{"c", DType::Complex128}}, {{"o", DType::Bool}})),
            "unsupported operand type complex128 for '<' in tasklet line 1; Python does not define it for complex "
            "numbers");
  EXPECT_EQ(message_of("o = c // 2", scope({{"c", DType::Complex128}}, {{"o", DType::Complex128}})),
            "unsupported operand type complex for '//' in tasklet line 1; Python does not define it for complex "
            "numbers");
  EXPECT_EQ(message_of("o = float(c)", scope({{"c", DType::Complex128}}, {{"o", kF64}})),
            "unsupported operand type complex128 for 'float' in tasklet line 1; Python does not define it for "
            "complex numbers");
  EXPECT_EQ(translate("o = c", scope({{"c", DType::Complex128}}, {{"o", DType::Complex128}})), "o = c;\n");
}

TEST(PythonTasklet, ComplexNumbers) {
  auto z = [](std::map<std::string, DType> in, std::map<std::string, DType> out) { return scope(in, out); };
  const DType c128 = DType::Complex128, c64 = DType::Complex64;
  // Python's promotion: a complex operand makes the operation complex (float64 parts unless every
  // operand that is not a literal is 32 bits wide); imaginary literals are complex(0, value).
  EXPECT_EQ(translate("o = c * 2", z({{"c", c128}}, {{"o", c128}})), "o = c * static_cast<dace::complex128>(2);\n");
  EXPECT_EQ(translate("o = x + 1j", z({{"x", kF64}}, {{"o", c128}})),
            "o = static_cast<dace::complex128>(x) + dace::complex128(0.0, 1.0);\n");
  EXPECT_EQ(translate("o = s * 2.0", z({{"s", c64}}, {{"o", c64}})), "o = s * static_cast<dace::complex64>(2.0);\n");
  EXPECT_EQ(translate("o = s * x", z({{"s", c64}, {"x", kF64}}, {{"o", c128}})),
            "o = static_cast<dace::complex128>(s) * static_cast<dace::complex128>(x);\n");
  EXPECT_EQ(translate("o = abs(c) + c.real - np.imag(c)", z({{"c", c128}}, {{"o", kF64}})),
            "o = sdfc::rt::abs(c) + c.re - sdfc::rt::imag(c);\n");
  EXPECT_EQ(translate("o = c.conjugate() ** 2 + exp(c)", z({{"c", c128}}, {{"o", c128}})),
            "o = sdfc::rt::complex_pow(sdfc::rt::conj(c), 2) + sdfc::rt::exp(c);\n");
  EXPECT_EQ(translate("o = c == 1", z({{"c", c128}}, {{"o", DType::Bool}})),
            "o = c == static_cast<dace::complex128>(1);\n");
  EXPECT_EQ(translate("o = dace.complex128(x) + complex(x, 2)", z({{"x", kF64}}, {{"o", c128}})),
            "o = static_cast<dace::complex128>(x) + dace::complex128(x, 2.0);\n");
  EXPECT_EQ(translate("o = -c if x > 0 else 0", z({{"c", c128}, {"x", kF64}}, {{"o", c128}})),
            "o = (x > 0 ? -c : static_cast<dace::complex128>(0));\n");
}

TEST(PythonTasklet, ComplexUfuncs) {
  const DType c64 = DType::Complex64;
  auto z = scope({{"c", c64}}, {{"o", c64}, {"b", DType::Bool}});
  // NumPy's functions of complex data as DaCe's frontend writes them (sdfc/complex.h).
  EXPECT_EQ(translate("o = asinh(c) + acos(c) + expm1(c) + log1p(c)", z),
            "o = sdfc::rt::asinh(c) + sdfc::rt::acos(c) + sdfc::rt::expm1(c) + sdfc::rt::log1p(c);\n");
  EXPECT_EQ(translate("o = rint(c) + sign(c) + sign_numpy_2(c)", z),
            "o = sdfc::rt::round(c) + sdfc::rt::sign(c) + sdfc::rt::sign_numpy_2(c);\n");
  EXPECT_EQ(translate("b = isnan(c) or isfinite(c)", z), "b = sdfc::rt::isnan(c) || sdfc::rt::isfinite(c);\n");
}

TEST(PythonTasklet, IdentityWithBoolsAndNone) {
  auto s = scope({{"f", DType::Bool}, {"x", kF64}}, {{"b", DType::Bool}});
  EXPECT_EQ(translate("b = f is False", s), "b = f == false;\n");
  EXPECT_EQ(translate("b = True is not f", s), "b = true != f;\n");
  EXPECT_EQ(translate("b = x is None", s), "b = false;\n");
  EXPECT_EQ(message_of("b = x is True", s),
            "'is' between two values in tasklet line 1 is not supported; only comparisons with None, and of a bool "
            "with True or False, are (use == or !=)");
}

TEST(PythonTasklet, ErrorCalls) {
  EXPECT_EQ(message_of("o = math.sqrt(x, y)"), "function 'math.sqrt' in tasklet line 1 takes 1 argument, got 2");
  EXPECT_EQ(message_of("o = max(x)"), "function 'max' in tasklet line 1 takes at least 2 arguments, got 1");
  EXPECT_EQ(message_of("o = math.log(x, base=2)"),
            "keyword argument 'base' in the call of 'math.log' in tasklet line 1 is not supported");
}

/// A pointer connector indexes with the element strides of its memlet's subset (GT4Py reads a field
/// column `q_e[0:E, k]` through `field[index]`: the stride of E, not 1), with one index per moving
/// dimension or per dimension, as DaCe's code generator does.
TEST(PythonTasklet, SubscriptsUseTheMemletsStrides) {
  TaskletScope s = scope({{"A", kF64}}, {{"o", kF64}}, {{"i", kI64}, {"j", kI64}});
  s.layouts["A"] = {{"K", "1"}, {"K"}};  // A[0:E, k]: the E dimension moves, with stride K
  EXPECT_EQ(translate("o = A[i]", s), "o = A[(i) * (K)];\n");
  EXPECT_EQ(translate("o = A[i, 0]", s), "o = A[(i) * (K) + (0)];\n");
  s.layouts["A"] = {{"M", "1"}, {"M", "1"}};
  EXPECT_EQ(translate("o = A[i, j]", s), "o = A[(i) * (M) + (j)];\n");
  s.layouts["A"] = {{"1"}, {"1"}};
  EXPECT_EQ(translate("o = A[i + 1]", s), "o = A[i + 1];\n");
}

TEST(PythonTasklet, ErrorSubscripts) {
  TaskletScope s = scope({{"A", kF64}}, {{"o", kF64}}, {{"i", kI64}, {"j", kI64}});
  EXPECT_EQ(message_of("o = A[i, j]", s),
            "subscript 'A[i, j]' in tasklet line 1 has 2 indices; connector 'A' takes one");
  EXPECT_EQ(message_of("o = A[0.5]", s),
            "subscript index of 'A[0.5]' in tasklet line 1 has type float64; expected an integer");
  EXPECT_EQ(message_of("o = i[0]", s), "cannot subscript 'i' in tasklet line 1; only connectors can be subscripted");
  s.layouts["A"] = {{"M", "1"}, {"M", "1"}};
  EXPECT_EQ(message_of("o = A[i, j, 0]", s),
            "subscript 'A[i, j, 0]' in tasklet line 1 has 3 indices, but the memlet of connector 'A' has 2 "
            "dimension(s), 2 of them of more than one element");
}

/// A connector bound to a pointer (a memlet of several elements, or a dynamic input) must be
/// subscripted: a bare use would read or replace the pointer (a mutant whose memlet grew from one
/// element to a range reached the C++ compiler as "cannot convert 'const double*' to 'double'").
TEST(PythonTasklet, PointerConnectorsMustBeSubscripted) {
  TaskletScope s = scope({{"A", kF64}}, {{"o", kF64}, {"B", kF64}}, {{"i", kI64}});
  s.layouts["A"] = {{"1"}, {"1"}};
  s.pointers = {"A", "B"};
  EXPECT_EQ(translate("o = A[i]", s), "o = A[i];\n");
  EXPECT_EQ(translate("B[i] = A[0] + 1.0", s), "B[i] = A[0] + 1.0;\n");
  EXPECT_EQ(message_of("o = A + 1.0", s),
            "connector 'A' is used as a single value in tasklet line 1, but its memlet binds a pointer (it moves "
            "more than one element, or is dynamic); subscript it ('A[0]', 'A[i]') or make the memlet one element");
  EXPECT_NE(message_of("B = 2.0", s).find("connector 'B' is used as a single value"), std::string::npos);
  EXPECT_NE(message_of("B += 2.0", s).find("connector 'B' is used as a single value"), std::string::npos);
}

// ---- the runtime helpers the statements call: Python semantics ------------------------------

TEST(PythonTaskletRuntime, FloorDivisionAndModuloFloor) {
  EXPECT_EQ(sdfc::rt::floordiv(-7, 2), -4);
  EXPECT_EQ(sdfc::rt::floordiv(7, -2), -4);
  EXPECT_EQ(sdfc::rt::floordiv(7, 2), 3);
  EXPECT_EQ(sdfc::rt::floordiv(-8, 2), -4);
  EXPECT_EQ(sdfc::rt::floormod(-7, 2), 1);
  EXPECT_EQ(sdfc::rt::floormod(7, -2), -1);
  EXPECT_EQ(sdfc::rt::floormod(-8, 2), 0);
  EXPECT_EQ(sdfc::rt::floormod(std::int64_t{-7}, 3), 2);
  EXPECT_DOUBLE_EQ(sdfc::rt::floordiv(-7.5, 2.0), -4.0);
  EXPECT_DOUBLE_EQ(sdfc::rt::floormod(-7.5, 2.0), 0.5);
  EXPECT_DOUBLE_EQ(sdfc::rt::floormod(7.5, -2.0), -0.5);
  EXPECT_DOUBLE_EQ(sdfc::rt::floormod(7, 2.5), 2.0);
}

TEST(PythonTaskletRuntime, Power) {
  EXPECT_EQ(sdfc::rt::pow(2, 10), 1024);
  EXPECT_EQ(sdfc::rt::pow(-3, 3), -27);
  EXPECT_EQ(sdfc::rt::pow(5, 0), 1);
  EXPECT_DOUBLE_EQ(sdfc::rt::pow(2.0, -1), 0.5);
  EXPECT_DOUBLE_EQ(sdfc::rt::pow(2, 0.5), std::sqrt(2.0));
  static_assert(std::is_same_v<decltype(sdfc::rt::pow(2, 10)), int>);
  static_assert(std::is_same_v<decltype(sdfc::rt::pow(2.0f, 2)), float>);
}

TEST(PythonTaskletRuntime, MinMaxAbsFloorCeil) {
  EXPECT_EQ(sdfc::rt::min(3, 1, 2), 1);
  EXPECT_EQ(sdfc::rt::max(3, 1, 2), 3);
  EXPECT_DOUBLE_EQ(sdfc::rt::max(1, 2.5), 2.5);
  EXPECT_DOUBLE_EQ(sdfc::rt::min(1, 2.5), 1.0);
  EXPECT_EQ(sdfc::rt::abs(-3), 3);
  EXPECT_DOUBLE_EQ(sdfc::rt::abs(-2.5), 2.5);
  EXPECT_DOUBLE_EQ(sdfc::rt::floor(-2.5), -3.0);
  EXPECT_DOUBLE_EQ(sdfc::rt::ceil(-2.5), -2.0);
  EXPECT_EQ(sdfc::rt::floor(3), 3);
  static_assert(std::is_same_v<decltype(sdfc::rt::floor(3)), int>);
  static_assert(std::is_same_v<decltype(sdfc::rt::max(1, 2.5)), double>);
}

// The types the translator infers for calls of the helpers are the types C++ computes.
TEST(PythonTaskletRuntime, HelperTypesMatchTheInferredTypes) {
  std::int8_t c = -7, d = 2;
  static_assert(std::is_same_v<decltype(sdfc::rt::floordiv(c, d)), std::int8_t>);
  static_assert(std::is_same_v<decltype(sdfc::rt::floordiv(static_cast<int>(c), d)), int>);
  static_assert(std::is_same_v<decltype(sdfc::rt::max(c, d)), std::int8_t>);
  static_assert(std::is_same_v<decltype(sdfc::rt::abs(c)), int>);
  static_assert(std::is_same_v<decltype(sdfc::rt::floordiv(-7, 2.0)), double>);
  std::uint32_t u = 1;
  int a = -1;
  static_assert(std::is_same_v<decltype(static_cast<std::int64_t>(a) - u), std::int64_t>);
  EXPECT_EQ(static_cast<std::int64_t>(a) - u, -2);
  EXPECT_EQ(sdfc::rt::floordiv(static_cast<int>(c), d), -4);
  EXPECT_EQ(sdfc::rt::min(static_cast<std::int64_t>(a), u), -1);
}

// What DaCe's runtime (dace/math.h, pyinterop.h) gives Python tasklets, as GT4Py and DaCe's
// frontend write them.
TEST(PythonTasklet, DaceRuntimeFunctions) {
  EXPECT_EQ(translate("o = tgamma(x) + lgamma(y)"), "o = std::tgamma(x) + std::lgamma(y);\n");
  EXPECT_EQ(translate("o = trunc(x)"), "o = std::trunc(x);\n");
  EXPECT_EQ(translate("k = math.ifloor(x)"), "k = sdfc::rt::ifloor(x);\n");
  EXPECT_EQ(translate("o = Min(x, y, z)"), "o = sdfc::rt::min(x, y, z);\n");
  EXPECT_EQ(translate("k = Max(a, b)"), "k = sdfc::rt::max(a, b);\n");
  EXPECT_EQ(translate("o = round(x) + sign(y)"), "o = sdfc::rt::round(x) + sdfc::rt::sign(y);\n");
  EXPECT_EQ(translate("k = py_mod(a, b)"), "k = sdfc::rt::floormod(a, b);\n");
  EXPECT_EQ(translate("o = deg2rad(x) + nextafter(x, y)"), "o = sdfc::rt::deg2rad(x) + std::nextafter(x, y);\n");
  EXPECT_EQ(translate("o = ldexp(x, k)"), "o = std::ldexp(x, k);\n");
  EXPECT_EQ(translate("o = inf if x > 0 else nan"), "o = (x > 0 ? HUGE_VAL : static_cast<double>(NAN));\n");
  // NumPy's float_power computes in float64 whatever the operands (DaCe's np_float_pow).
  EXPECT_EQ(translate("o = np_float_pow(a, b)"), "o = std::pow(static_cast<double>(a), static_cast<double>(b));\n");
}

TEST(PythonTasklet, ConnectorsAndSymbolsShadowBuiltinNames) {
  EXPECT_EQ(translate("o = inf + nan", scope({{"inf", kF64}, {"nan", kF64}}, {{"o", kF64}})), "o = inf + nan;\n");
  EXPECT_EQ(translate("o = x * inf", scope({{"x", kF64}}, {{"o", kF64}}, {{"inf", kI64}})), "o = x * inf;\n");
}

TEST(PythonTasklet, DaceRuntimeFunctionsCompute) {
  EXPECT_EQ(sdfc::rt::round(2.5), 2.0);  // ties to even, as Python and NumPy
  EXPECT_EQ(sdfc::rt::round(-3.5), -4.0);
  EXPECT_EQ(sdfc::rt::sign(-2.5), -1.0);
  EXPECT_EQ(sdfc::rt::sign(0), 0);
  EXPECT_TRUE(std::isnan(sdfc::rt::sign(std::nan(""))));
  EXPECT_EQ(sdfc::rt::ifloor(-2.5), -3);
  EXPECT_EQ(sdfc::rt::iround(2.5), 2);
  EXPECT_EQ(sdfc::rt::cpp_mod(-7, 3), -1);
  EXPECT_EQ(sdfc::rt::floormod(-7, 3), 2);
  EXPECT_EQ(sdfc::rt::gcd(-12, 18), 6);
  EXPECT_EQ(sdfc::rt::lcm(4, 6), 12);
  EXPECT_EQ(sdfc::rt::heaviside(0.0, 0.5), 0.5);
  EXPECT_EQ(sdfc::rt::reciprocal(4.0), 0.25);
  EXPECT_DOUBLE_EQ(sdfc::rt::rad2deg(sdfc::rt::deg2rad(30.0)), 30.0);
  EXPECT_EQ(sdfc::rt::truediv(1, 2), 0.5);
}

// DaCe's frontend writes numpy.arange's tasklet as `__out = (decltype(__out)(0) + (__i *
// decltype(__out)(1)))`: a cast to the connector's type (DaCe's numpy/split tests).
TEST(PythonTasklet, DecltypeCastsToTheConnectorsType) {
  EXPECT_EQ(translate("k = (decltype(k)(0) + (i * decltype(k)(1)))"), "k = 0 + i * 1;\n");  // int literals
  EXPECT_EQ(translate("o = decltype(o)(a)"), "o = static_cast<double>(a);\n");
  EXPECT_EQ(translate("o = decltype(x)(a) / 2"), "o = static_cast<double>(a) / 2;\n");
  EXPECT_NE(message_of("o = decltype(q)(1)").find("decltype(q)"), std::string::npos);
}

// DaCe's ufunc tasklets that write two outputs through a call (numpy's divmod, modf, frexp).
TEST(PythonTasklet, TwoOutputCallsOfNumpysUfuncs) {
  auto s = scope({{"x", kF64}, {"f", kF32}, {"a", kI32}, {"b", kI32}},
                 {{"q", kI32}, {"r", kI32}, {"i", kF64}, {"fr", kF64}, {"m", kF64}, {"e", kI32}});
  EXPECT_EQ(translate("py_divmod(a, b, q, r)", s), "q = sdfc::rt::floordiv(a, b);\nr = sdfc::rt::floormod(a, b);\n");
  EXPECT_EQ(translate("np_modf(x, i, fr)", s),
            "{\n  double __integral;\n  fr = std::modf(x, &__integral);\n  i = __integral;\n}\n");
  EXPECT_EQ(translate("np_modf(a, i, fr)", s), "i = static_cast<double>(a);\nfr = 0.0;\n");
  EXPECT_EQ(translate("np_frexp(x, m, e)", s),
            "{\n  int __exponent;\n  m = std::frexp(x, &__exponent);\n  e = __exponent;\n}\n");
  EXPECT_NE(message_of("np_frexp(x, m)", s).find("takes 3 arguments"), std::string::npos);
  EXPECT_NE(message_of("np_frexp(x, m, a)", s).find("output connectors"), std::string::npos);
}

// NumPy's log10, log2 and reciprocal of complex numbers (DaCe's ufunc tests with complex64).
TEST(PythonTasklet, ComplexLogarithmsAndReciprocal) {
  auto s = scope({{"c", DType::Complex64}, {"x", kF64}}, {{"o", DType::Complex64}, {"r", kF64}});
  EXPECT_EQ(translate("o = log10(c) + log2(c)", s), "o = sdfc::rt::log10(c) + sdfc::rt::log2(c);\n");
  EXPECT_EQ(translate("o = reciprocal(c)", s), "o = sdfc::rt::reciprocal(c);\n");
  EXPECT_EQ(translate("r = log10(x)", s), "r = std::log10(x);\n");  // real arguments: the C++ functions
}

// DaCe's identity of a max reduction over int64 is the literal -9223372036854775808 (the frontend's
// reductions_test::test_max_int64): one int64 literal, printed as C++ that needs no wider type.
TEST(PythonTasklet, TheSmallestInt64Literal) {
  EXPECT_EQ(translate("o = max(x, -9223372036854775808)", scope({{"x", kI64}}, {{"o", kI64}})),
            "o = sdfc::rt::max(x, (-9223372036854775807LL - 1));\n");
}

// Calls of DaCe's callbacks: arrays by pointer (the address of a connector bound to one element),
// scalars converted to the parameter's type, results beyond one scalar through output connectors;
// a callback's name shadows the built-in function of that name.
TEST(PythonTasklet, CallbackCalls) {
  Callback clock{{}, {{false, kF64}}};
  Callback product{{{true, kF64}, {false, kF64}}, {{true, kF64}, {false, kI32}}};
  Callback log{{{false, kF64}}, {}};
  auto s = scope({{"a", kF64}, {"x", kI32}}, {{"o", kF64}, {"r", kI32}, {"t", kF64}});
  s.pointers = {"a", "t"};
  s.callbacks = {{"clock", &clock}, {"product", &product}, {"log", &log}};
  EXPECT_EQ(translate("o = clock() + 1.0", s), "o = clock() + 1.0;\n");
  EXPECT_EQ(translate("product(a, x, t, r)", s), "product(a, static_cast<double>(x), t, &r);\n");
  EXPECT_EQ(translate("log(x)", s), "log(static_cast<double>(x));\n");  // not std::log
  EXPECT_NE(message_of("o = log(1.0)", s).find("callback 'log' returns no single value"), std::string::npos);
  EXPECT_NE(message_of("product(a, x, t)", s).find("takes 4 positional arguments (2 values and 2 result pointers)"),
            std::string::npos);
  EXPECT_NE(message_of("product(a, x, t, x)", s).find("argument 4 of callback 'product'"), std::string::npos);
  EXPECT_NE(message_of("product(r, x, t, r)", s).find("connector 'r' is int32, the callback takes float64"),
            std::string::npos);
}

TEST(PythonTasklet, LambdasAreInlinedWhereTheyAreCalled) {
  // DaCe's frontend writes `f = lambda a, b: a + b` as `f = (lambda a, b: (a + b))`; the parameters
  // are replaced by the call's arguments all at once (here `a` and `b` are also connectors).
  EXPECT_EQ(translate("f = (lambda a, b: (a + b))\no = f(y, z)"), "o = y + z;\n");
  EXPECT_EQ(translate("f = lambda a, b: a * 2 + b\no = f(b, a)"), "o = b * 2 + a;\n");
  EXPECT_EQ(translate("g = lambda: x\no = g() + g()"), "o = x + x;\n");
  EXPECT_EQ(message_of("f = lambda a: a\no = f(x, y)"),
            "lambda 'f' takes 1 positional argument(s), but tasklet line 2 calls it with 2");
  EXPECT_EQ(message_of("f = lambda a=1: a\no = f()"),
            "tasklet line 1: unsupported lambda parameters in 'lambda a=1: a'; sdfc inlines lambdas of plain names (no "
            "defaults, *args or tuple unpacking)");
  EXPECT_EQ(message_of("o = lambda a: a"), "tasklet line 1: a lambda must be assigned to a new name, not 'o'");
}
