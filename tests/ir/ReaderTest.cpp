#include <zlib.h>

#include <algorithm>
#include <filesystem>

#include "TestUtil.h"
#include "codegen/Codegen.h"
#include "ir/Dump.h"
#include "passes/Pipeline.h"

using namespace sdfc;
using namespace sdfc::test;

namespace {
Json small() {
  return load_json("small.sdfg");
}
Json& state0(Json& j) {
  return j["nodes"][0];
}

std::string gzip(const std::string& s) {
  z_stream zs{};
  deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(compressBound(s.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(s.data()));
  zs.avail_in = s.size();
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = out.size();
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}
}  // namespace

TEST(Reader, AppliesDaCeDefaults) {
  auto sdfg = read_sdfg(slurp(data_path("small.sdfg")));
  const DataDesc* a = sdfg->find_data("A");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->storage, StorageType::Default);
  EXPECT_EQ(a->lifetime, Lifetime::Scope);
  EXPECT_FALSE(a->transient);
  ASSERT_EQ(a->strides.size(), 1u);  // omitted strides: C order
  EXPECT_EQ(print_expr(a->strides[0]), "1");
  EXPECT_EQ(print_expr(a->total_size), "N");  // omitted total_size: product of the shape
  EXPECT_EQ(print_expr(a->offset[0]), "0");
  // Omitted dtype is int32 in DaCe
  Json j = small();
  j["attributes"]["_arrays"]["A"]["attributes"].erase("dtype");
  EXPECT_EQ(read_sdfg(j.dump())->find_data("A")->dtype, DType::Int32);
}

TEST(Reader, KeepsInclusiveRangeEnds) {
  auto sdfg = read_sdfg(slurp(data_path("small.sdfg")));
  const Node& entry = sdfg->root.blocks[0]->node(0);
  ASSERT_EQ(entry.kind, NodeKind::MapEntry);
  EXPECT_EQ(print_expr(entry.map.range[0].end), "-1 + N");
  EXPECT_EQ(range_str(entry.map.range), "0:N");
}

TEST(Reader, ReadsControlFlow) {
  auto sdfg = read_sdfg(slurp(data_path("small.sdfg")));
  ASSERT_EQ(sdfg->root.blocks.size(), 3u);
  const Block& loop = *sdfg->root.blocks[1];
  EXPECT_EQ(loop.kind, BlockKind::Loop);
  EXPECT_EQ(loop.loop_variable, "it");
  EXPECT_EQ(loop.loop_condition.code, "(it < 3)");
  const Block& cond = *sdfg->root.blocks[2];
  ASSERT_EQ(cond.kind, BlockKind::Conditional);
  ASSERT_EQ(cond.branches.size(), 2u);
  EXPECT_FALSE(cond.branches[1].first.has_value());
  EXPECT_EQ(cond.branches[1].second->blocks[0]->kind, BlockKind::Break);
  const InterstateEdge& e = sdfg->root.cf_edges[0];
  EXPECT_EQ(e.condition.code, "(h > 0)");
  ASSERT_EQ(e.assignments.size(), 1u);
  EXPECT_EQ(e.assignments[0].first, "k");
  EXPECT_TRUE(sdfg->root.cf_edges[1].unconditional());
}

TEST(Reader, FunctionCallAndNamedRegionsAreRegionsThatKeepTheirTypeAndArguments) {
  // DaCe's frontend wraps an inlined function's body in a FunctionCallRegion whose `arguments`
  // describe the call (the body already names the caller's data); DaCe's code generator runs it
  // as any region.
  Json j = small();
  Json state = state0(j);
  for (const char* type : {"FunctionCallRegion", "NamedRegion"}) {
    Json region = {{"type", type},
                   {"label", "call_f"},
                   {"attributes", {{"arguments", {{"a", "A"}}}}},
                   {"nodes", Json::array({state})},
                   {"edges", Json::array()},
                   {"start_block", 0}};
    j["nodes"][0] = region;
    auto sdfg = read_sdfg(j.dump());
    const Block& b = *sdfg->root.blocks[0];
    EXPECT_EQ(b.kind, BlockKind::Region) << type;
    ASSERT_EQ(b.blocks.size(), 1u) << type;
    EXPECT_EQ(b.blocks[0]->kind, BlockKind::State) << type;
    Json back = Json::parse(write_sdfg(*sdfg));
    EXPECT_EQ(back["nodes"][0]["type"], type);
    EXPECT_EQ(back["nodes"][0]["attributes"]["arguments"]["a"], "A") << type;
  }
}

TEST(Reader, ReadsGzip) {
  std::string plain = slurp(data_path("small.sdfg"));
  auto a = read_sdfg(plain);
  auto b = read_sdfg(gzip(plain));
  EXPECT_EQ(dump(*a), dump(*b));
  EXPECT_EQ(write_sdfg(*a), write_sdfg(*b));
}

TEST(Reader, CorruptGzip) {
  std::string z = gzip(slurp(data_path("small.sdfg")));
  z.resize(z.size() / 2);
  auto ds = problems(z);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].message, "truncated gzip data");
}

TEST(Reader, MalformedJsonHasLineAndColumn) {
  auto ds = problems(std::string("{\n  \"type\": \"SDFG\",\n  \"attributes\": {,}\n}"));
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].line, 3);
  EXPECT_EQ(ds[0].column, 18);
  EXPECT_EQ(ds[0].str().rfind("test.sdfg:3:18: error: malformed JSON: syntax error", 0), 0u) << ds[0].str();
}

TEST(Reader, TruncatedJson) {
  std::string text = slurp(data_path("small.sdfg"));
  for (std::size_t cut : {std::size_t(1), text.size() / 3, text.size() - 2}) {
    auto ds = problems(text.substr(0, cut));
    ASSERT_EQ(ds.size(), 1u);
    EXPECT_NE(ds[0].message.find("malformed JSON"), std::string::npos) << ds[0].str();
    EXPECT_GT(ds[0].line, 0);
  }
}

TEST(Reader, WrongValueType) {
  Json j = small();
  j["attributes"]["_arrays"]["A"]["attributes"]["transient"] = 3;
  auto d = one_problem(j);
  EXPECT_EQ(d.pointer, "/attributes/_arrays/A/attributes/transient");
  EXPECT_EQ(d.message, "expected transient (true or false) but found the number 3");
}

TEST(Reader, NumberWhereStringExpected) {
  Json j = small();
  state0(j)["nodes"][3]["attributes"]["data"] = 12;
  auto d = one_problem(j);
  EXPECT_EQ(d.pointer, "/nodes/0/nodes/3/attributes/data");
  EXPECT_EQ(d.message, "expected a data container name (a string) but found the number 12");
}

TEST(Reader, MissingRequiredKey) {
  Json j = small();
  state0(j)["nodes"][0]["attributes"].erase("params");
  auto d = one_problem(j);
  EXPECT_EQ(d.pointer, "/nodes/0/nodes/0/attributes");
  EXPECT_EQ(d.message, "missing required key \"params\"");
}

TEST(Reader, HugeNumbers) {
  Json j = small();
  state0(j)["edges"][0]["src"] = "99999999999999999999999";
  auto d = one_problem(j);
  EXPECT_EQ(d.pointer, "/nodes/0/edges/0/src");
  EXPECT_EQ(d.message,
            "expected the source node (a non-negative index) but found the string \"99999999999999999999999\"");
  Json k = small();
  k["attributes"]["_arrays"]["A"]["attributes"]["shape"][0] = "1e999999";
  EXPECT_EQ(problems(k).size(), 0u);  // a float extent is unusual but not provably wrong here
  std::string text = R"({"type":"SDFG","attributes":{"name":"x"},"nodes":[],"start_block":1e400})";
  auto ds = problems(text);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].message, "malformed JSON: number overflow parsing '1e400'");
  EXPECT_EQ(ds[0].line, 1);
  EXPECT_EQ(ds[0].column, static_cast<int>(text.find("1e400")) + 5);  // nlohmann points after the literal
}

TEST(Reader, EveryBadValueOfAFileIsReportedInOneRun) {
  // Unknown enum values and malformed expressions do not stop the reader: one line per problem.
  Json j = small();
  j["attributes"]["_arrays"]["A"]["attributes"]["dtype"] = "float128";
  j["attributes"]["_arrays"]["A"]["attributes"]["storage"] = "GPU_Texture";
  j["attributes"]["_arrays"]["B"]["attributes"]["shape"][0] = "N +* 2";
  state0(j)["nodes"][0]["attributes"]["schedule"] = "FPGA_Device";
  auto ds = problems(j);
  ASSERT_EQ(ds.size(), 4u);
  std::vector<std::string> pointers;
  for (auto& d : ds) pointers.push_back(d.pointer);
  std::sort(pointers.begin(), pointers.end());
  EXPECT_EQ(pointers, (std::vector<std::string>{
                          "/attributes/_arrays/A/attributes/dtype", "/attributes/_arrays/A/attributes/storage",
                          "/attributes/_arrays/B/attributes/shape/0", "/nodes/0/nodes/0/attributes/schedule"}));
  // A problem that stops the reader still comes with those found before it.
  state0(j)["edges"][0]["src"] = "x";
  ds = problems(j);
  ASSERT_EQ(ds.size(), 5u);
  EXPECT_EQ(ds.back().pointer, "/nodes/0/edges/0/src");
}

TEST(Reader, UnknownEnumValues) {
  struct Case {
    const char* key;
    const char* value;
    const char* pointer;
    const char* message_start;
  } cases[] = {
      {"dtype", "float128", "/attributes/_arrays/A/attributes/dtype",
       "unknown dtype \"float128\"; expected one of bool, int8"},
      {"storage", "GPU_Texture", "/attributes/_arrays/A/attributes/storage",
       "unknown storage type \"GPU_Texture\"; expected one of Default, Register"},
      {"lifetime", "Forever", "/attributes/_arrays/A/attributes/lifetime",
       "unknown lifetime \"Forever\"; expected one of Scope, State"},
  };
  for (auto& c : cases) {
    Json j = small();
    j["attributes"]["_arrays"]["A"]["attributes"][c.key] = c.value;
    auto d = one_problem(j);
    EXPECT_EQ(d.pointer, c.pointer);
    EXPECT_EQ(d.message.rfind(c.message_start, 0), 0u) << d.message;
  }
  Json j = small();
  state0(j)["nodes"][0]["attributes"]["schedule"] = "FPGA_Device";
  auto d = one_problem(j);
  EXPECT_EQ(d.pointer, "/nodes/0/nodes/0/attributes/schedule");
  EXPECT_EQ(d.message,
            "unknown or unsupported schedule \"FPGA_Device\"; expected one of Default, Sequential, "
            "CPU_Multicore, GPU_Device, GPU_ThreadBlock");
}

TEST(Reader, MalformedExpression) {
  Json j = small();
  j["attributes"]["_arrays"]["A"]["attributes"]["shape"][0] = "$N +* 2";
  auto d = one_problem(j);
  EXPECT_EQ(d.pointer, "/attributes/_arrays/A/attributes/shape/0");
  EXPECT_EQ(d.message, "malformed expression \"$N +* 2\": unexpected character '*' (at character 5)");
}

TEST(Reader, MalformedCondition) {
  Json j = small();
  j["edges"][0]["attributes"]["data"]["attributes"]["condition"]["string_data"] = "h >";
  auto d = one_problem(j);
  EXPECT_EQ(d.pointer, "/edges/0/attributes/data/attributes/condition");
  EXPECT_EQ(d.message.rfind("malformed expression \"h >\"", 0), 0u) << d.message;
}

TEST(Reader, UnsupportedNodeTypeNamesTheConstruct) {
  Json j = small();
  state0(j)["nodes"][3]["type"] = "Consume";
  auto d = one_problem(j);
  EXPECT_EQ(d.pointer, "/nodes/0/nodes/3/type");
  EXPECT_EQ(d.message,
            "unsupported dataflow node type \"Consume\"; supported: AccessNode, MapEntry, MapExit, Tasklet, "
            "NestedSDFG, LibraryNode");
}

/// Library nodes are read (the expand-library-nodes pass expands them); without a classpath the
/// reader says what is missing.
TEST(Reader, LibraryNodesKeepTheirClassAndProperties) {
  Json j = small();
  state0(j)["nodes"][3]["type"] = "LibraryNode";
  state0(j)["nodes"][3]["classpath"] = "dace.libraries.standard.nodes.reduce.Reduce";
  state0(j)["nodes"][3]["attributes"]["identity"] = 0;
  auto sdfg = read_sdfg(j.dump(), "t.sdfg");
  const Node& n = sdfg->root.blocks[0]->node(3);
  EXPECT_EQ(n.kind, NodeKind::Library);
  EXPECT_EQ(n.classpath, "dace.libraries.standard.nodes.reduce.Reduce");
  EXPECT_EQ(n.extra["identity"], 0);
  Json back = Json::parse(write_sdfg(*sdfg));
  EXPECT_EQ(back["nodes"][0]["nodes"][3]["classpath"], "dace.libraries.standard.nodes.reduce.Reduce");
  EXPECT_EQ(back["nodes"][0]["nodes"][3]["type"], "LibraryNode");
  state0(j)["nodes"][3].erase("classpath");
  auto d = one_problem(j);
  EXPECT_EQ(d.pointer, "/nodes/0/nodes/3");
  EXPECT_NE(d.message.find("classpath"), std::string::npos) << d.message;
}

TEST(Reader, UnsupportedDescriptorAndBlock) {
  Json j = small();
  j["attributes"]["_arrays"]["A"]["type"] = "Stream";
  auto d = one_problem(j);
  EXPECT_EQ(d.pointer, "/attributes/_arrays/A/type");
  EXPECT_EQ(d.message,
            "unsupported data descriptor type \"Stream\"; supported: Array, Scalar, ArrayView, View, Structure; "
            "DaCe's streams (queues pushed and popped at run time) are not modelled by sdfc: write the elements into "
            "an array with a counter");
  Json k = small();
  k["nodes"][1]["type"] = "TaskGraphRegion";  // a block type sdfc does not know
  d = one_problem(k);
  EXPECT_EQ(d.pointer, "/nodes/1/type");
  EXPECT_EQ(d.message,
            "unsupported control-flow block type \"TaskGraphRegion\"; supported: SDFGState, ControlFlowRegion "
            "(NamedRegion, FunctionCallRegion), LoopRegion, ConditionalBlock, BreakBlock, ContinueBlock, ReturnBlock");
}

TEST(Reader, CompositeDtypeIsUnsupported) {
  Json j = small();
  j["attributes"]["_arrays"]["A"]["attributes"]["dtype"] = {{"type", "pointer"}, {"dtype", "float64"}};
  auto d = one_problem(j);
  EXPECT_EQ(d.pointer, "/attributes/_arrays/A/attributes/dtype");
  EXPECT_EQ(d.message,
            "unsupported composite dtype \"pointer\" (supported: scalar types such as float64, and structs of them)");
  j["attributes"]["_arrays"]["A"]["attributes"]["dtype"] = {{"type", "opaque"}, {"ctype", "PyObject*"}};
  EXPECT_EQ(one_problem(j).message,
            "unsupported composite dtype \"opaque\" (supported: scalar types such as float64, and structs of them); "
            "DaCe's opaque types are C types sdfc does not know, such as the Python objects (pyobject) a callback "
            "returns: let callbacks return numbers or arrays");
  j["attributes"]["_arrays"]["A"]["attributes"]["dtype"] = "float64";
  j["attributes"]["_arrays"]["A"]["type"] = "ArraySubclass";  // DaCe's replacements_test
  EXPECT_EQ(one_problem(j).message,
            "unsupported data descriptor type \"ArraySubclass\"; supported: Array, Scalar, ArrayView, View, "
            "Structure; a descriptor class sdfc does not know (a Python subclass of Array keeps its meaning in DaCe "
            "only): declare the data as dace.data.Array");
}

TEST(Reader, StructDtypesAreInternedWithCLayout) {
  // DaCe's argmin/argmax struct: one DType per definition, named by it, sized as C lays it out.
  Json j = small();
  Json st = {{"type", "struct"},
             {"name", "_val_and_idx"},
             {"data", Json::array({Json::array({"idx", "int32"}), Json::array({"val", "float64"})})},
             {"length", Json::array()},
             {"bytes", 12}};
  j["attributes"]["_arrays"]["A"]["attributes"]["dtype"] = st;
  std::unique_ptr<SDFG> sdfg = read_sdfg(j.dump(), "t.sdfg");
  DType t = sdfg->find_data("A")->dtype;
  ASSERT_TRUE(is_struct(t));
  EXPECT_EQ(to_string(t), "_val_and_idx");
  EXPECT_EQ(dtype_ctype(t), "_val_and_idx");
  EXPECT_EQ(dtype_size(t), 16u);  // int at 0, double at 8: C's alignment, not DaCe's packed 12
  EXPECT_EQ(struct_field(t, "val"), DType::Float64);
  EXPECT_EQ(struct_field(t, "idx"), DType::Int32);
  EXPECT_FALSE(struct_field(t, "other").has_value());
  EXPECT_EQ(intern_struct(*struct_of(t)), t);  // the same definition, the same type
  StructType other{"_val_and_idx", {{"idx", DType::Int32}, {"val", DType::Int64}}, {}};
  EXPECT_NE(intern_struct(other), t);  // same name, other fields: another type
  EXPECT_FALSE(is_struct(DType::Complex128));
  EXPECT_TRUE(is_signed(DType::Complex128));
  EXPECT_FALSE(is_signed(t));
}

TEST(Reader, StructDtypeProblemsAreNamed) {
  Json j = small();
  j["attributes"]["_arrays"]["A"]["attributes"]["dtype"] = {
      {"type", "struct"}, {"name", "pair"}, {"data", Json::array({Json::array({"a", {{"type", "struct"}}})})}};
  auto d = one_problem(j);
  EXPECT_EQ(d.pointer, "/attributes/_arrays/A/attributes/dtype/data/0/1");
  EXPECT_EQ(d.message,
            "struct field \"a\" of struct \"pair\" is itself composite; sdfc's struct fields are scalars and pointers");
  j["attributes"]["_arrays"]["A"]["attributes"]["dtype"] = {
      {"type", "struct"},
      {"name", "pair"},
      {"data", Json::array({Json::array({"a", "int32"}), Json::array({"a", "float64"})})}};
  d = one_problem(j);
  EXPECT_EQ(d.pointer, "/attributes/_arrays/A/attributes/dtype/data/1/0");
  EXPECT_EQ(d.message, "struct \"pair\" has two fields named \"a\"");
}

TEST(Reader, NotAnSdfg) {
  auto d = problems(std::string(R"({"hello": "world"})"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].pointer, "/type");
  EXPECT_EQ(d[0].message, "expected \"SDFG\" at the top level but found no \"type\" key; is this a DaCe .sdfg file?");
  auto e = problems(std::string("[1, 2, 3]"));
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].message, "expected an SDFG (a JSON object with \"type\": \"SDFG\") but found an array");
}

TEST(Reader, BinaryGarbage) {
  std::string garbage;
  for (int i = 0; i < 4096; ++i) garbage += static_cast<char>((i * 7919 + 13) % 256);
  auto ds = problems(garbage);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_NE(ds[0].message.find("malformed JSON"), std::string::npos);
  ds = problems(std::string("\x1f\x8b garbage", 10));
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_NE(ds[0].message.find("gzip"), std::string::npos);
}

TEST(Reader, DeepNestingIsRejectedWithoutRecursion) {
  std::string deep = R"({"type":"SDFG","attributes":{"name":"x","extra":)";
  deep += std::string(300000, '[') + std::string(300000, ']') + "},\"nodes\":[]}";
  auto ds = problems(deep);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].message,
            "JSON nested deeper than 512 levels (the pointer names the first 16); an SDFG never needs this");
  EXPECT_EQ(ds[0].pointer, "/attributes/extra/0/0/0/0/0/0/0/0/0/0/0/0/0/0");
  // Deeply nested control flow within the JSON limit is still bounded
  std::string region = R"({"type":"ControlFlowRegion","label":"r","nodes":[]})";
  for (int i = 0; i < 100; ++i) region = R"({"type":"ControlFlowRegion","label":"r","nodes":[)" + region + "]}";
  std::string file = R"({"type":"SDFG","attributes":{"name":"x"},"nodes":[)" + region + "]}";
  ds = problems(file);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].message, "control flow nested deeper than 64 levels");
}

/// The one problem of an SDFG whose array A has the shape [`extent`].
Diagnostic shape_problem(const std::string& extent) {
  std::string file =
      R"({"type":"SDFG","attributes":{"name":"x","symbols":{"N":"int64"},"_arrays":{"A":{"type":"Array",)"
      R"("attributes":{"shape":[")" +
      extent + R"("],"dtype":"float64"}}}},"nodes":[]})";
  auto ds = problems(file);
  EXPECT_EQ(ds.size(), 1u);
  return ds.empty() ? Diagnostic{} : ds[0];
}

TEST(Reader, LongFlatExpressionsAreRejectedNotRecursedInto) {
  // a + a + ... is a tree as deep as it is long: 20,000 terms overflowed the stack in simplify.
  std::string sum = "N";
  for (int i = 0; i < 20000; ++i) sum += " + N";
  Diagnostic d = shape_problem(sum);
  EXPECT_EQ(d.pointer, "/attributes/_arrays/A/attributes/shape/0");
  EXPECT_NE(d.message.find("expression has more than 2000 binary operators; split it"), std::string::npos) << d.message;
}

TEST(Reader, DeeplyNestedExpressionsAreRefused) {
  // 17 subset ends of N**2**2... (180 powers) took 26 s in simplification (issue 18); nesting is
  // limited to 64 levels, so any accepted expression stays fast (docs/benchmarks.md).
  std::string power = "N";
  for (int i = 0; i < 180; ++i) power += "**2";
  Diagnostic d = shape_problem(power);
  EXPECT_EQ(d.pointer, "/attributes/_arrays/A/attributes/shape/0");
  EXPECT_NE(d.message.find("expression nested deeper than 64 levels"), std::string::npos) << d.message;
}

TEST(Reader, InputsLargerThanTheLimitAreRefused) {
  // A gzip bomb stops at the limit instead of exhausting memory (the limit lowered to 1 MiB here).
  ::setenv("SDFC_MAX_INPUT_MB", "1", 1);
  std::string zeros(3u << 20, ' ');
  std::string gz = gzip(zeros);
  auto ds = problems(gz);
  ::unsetenv("SDFC_MAX_INPUT_MB");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].message,
            "the decompressed SDFG is larger than 1 MiB, the most sdfc reads; raise the limit with SDFC_MAX_INPUT_MB "
            "if the file is real");
  EXPECT_LT(gz.size(), 64u << 10);
}

TEST(Reader, ADirectoryIsNotAFile) {
  try {
    read_sdfg_file(::testing::TempDir());
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.diagnostic().message, "is a directory, not an SDFG file");
  }
}

TEST(Reader, IndicesSubsetsReadAsOneElementRanges) {
  Json j = load_json("small.sdfg");
  auto& m = j["nodes"][0]["edges"][1]["attributes"]["data"]["attributes"];
  m["subset"] = {{"type", "Indices"}, {"indices", Json::array({"i"})}};
  auto sdfg = read_sdfg(j.dump());
  const Range& r = *sdfg->root.blocks[0]->edges[1].memlet.subset;
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(print_expr(r[0].start, Dialect::Plain), "i");
  EXPECT_EQ(print_expr(r[0].end, Dialect::Plain), "i");
  EXPECT_TRUE(problems(j).empty());
  m["subset"] = {{"type", "Indices"}, {"ranges", Json::array()}};
  auto ds = problems(j);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].pointer, "/nodes/0/edges/1/attributes/data/attributes/subset");
  EXPECT_EQ(ds[0].message, "missing required key \"indices\" of an Indices subset");
}

TEST(Reader, UnknownTypesAreErrorsNotRewritten) {
  Json j = load_json("small.sdfg");
  j["nodes"][0]["edges"][1]["attributes"]["data"]["attributes"]["subset"]["type"] = "Weird";
  auto ds = problems(j);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].pointer, "/nodes/0/edges/1/attributes/data/attributes/subset/type");
  EXPECT_EQ(ds[0].message, "unsupported subset type \"Weird\"; expected \"Range\" or \"Indices\"");
  j = load_json("small.sdfg");
  j["nodes"][0]["edges"][1]["type"] = "WeirdEdge";
  ds = problems(j);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].pointer, "/nodes/0/edges/1/type");
  EXPECT_EQ(ds[0].message, "unsupported dataflow edge type \"WeirdEdge\"; expected \"MultiConnectorEdge\"");
  j = load_json("small.sdfg");
  j["edges"][0]["type"] = "Weird";
  ds = problems(j);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].pointer, "/edges/0/type");
  EXPECT_EQ(ds[0].message, "unsupported control-flow edge type \"Weird\"; expected \"Edge\"");
}

TEST(Reader, DuplicateKeysAreReported) {
  auto ds = problems(std::string(R"({"type":"SDFG","type":"SDFG"})"));
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].pointer, "/type");
  EXPECT_EQ(ds[0].message, "duplicate key \"type\" in one object");
}

TEST(Reader, UnreadableFile) {
  try {
    read_sdfg_file("/nonexistent/x.sdfg");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.diagnostic().str(),
              "/nonexistent/x.sdfg: /: error: cannot open the file (does it exist and is it readable?)");
  }
}

TEST(Reader, PlainDialectForOldFiles) {
  Json j = small();
  j["dace_version"] = "0.14.1";
  j["attributes"]["_arrays"]["A"]["attributes"]["shape"][0] = "N**2";
  auto sdfg = read_sdfg(j.dump());
  EXPECT_EQ(sdfg->dialect(), Dialect::Plain);
  EXPECT_EQ(print_expr(sdfg->find_data("A")->shape[0]), "N ** 2");
}

TEST(Reader, FuzzerFindingsStayFixed) {
  // Inputs the fuzzer once crashed on: each must read (or fail cleanly) and write back, and a
  // valid one go through the passes and the code generator for the CPU and CUDA (or fail cleanly),
  // as in the fuzz target (tests/fuzz/FuzzReader.cpp).
  for (auto& e : std::filesystem::directory_iterator(SDFC_TEST_DATA)) {
    if (e.path().filename().string().rfind("regress_", 0) != 0) continue;
    SCOPED_TRACE(e.path().string());
    try {
      auto sdfg = read_sdfg(slurp(e.path().string()));
      if (validate(*sdfg).empty()) {
        (void)dump(*sdfg);
        std::string text = write_sdfg(*sdfg);
        for (Target target : {Target::CPU, Target::CUDA}) {
          try {
            auto copy = read_sdfg(text);
            CompileOptions options;
            options.target = target;
            run_pipeline(*copy, options);
            (void)generate(*copy, options, "regress");
          } catch (const UserError&) {
          }
        }
      }
    } catch (const UserError&) {
    }
  }
}

TEST(Reader, EdgeWithoutAttributesIsAnEmptyMemlet) {
  Json j = small();
  state0(j)["edges"][0].erase("attributes");
  auto sdfg = read_sdfg(j.dump());
  const DataEdge& e = sdfg->root.blocks[0]->edges[0];
  EXPECT_TRUE(e.memlet.data.empty());
  EXPECT_EQ(print_expr(e.memlet.volume), "0");
  EXPECT_NO_THROW(write_sdfg(*sdfg));
}

TEST(Reader, StructuresBecomeAStructAndMemberContainers) {
  // DaCe's Structure "OuterStruct" {x: Structure "InnerStruct" {a: float32[20], b: int32}, y:
  // float64[10, 10]}: the structure is one element of a struct type whose array and structure
  // fields are pointers; each member is the container `A.field`, after its structure.
  auto sdfg = read_sdfg(slurp(data_path("structs/struct_recursive.sdfg")));
  std::vector<std::string> names;
  for (auto& [n, d] : sdfg->arrays)
    if (n.rfind("A", 0) == 0) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"A", "A.x", "A.x.a", "A.x.b", "A.y"}));
  const DataDesc* a = sdfg->find_data("A");
  ASSERT_TRUE(a && a->structure && !a->member && !a->transient);
  const StructType* outer = struct_of(a->dtype);
  ASSERT_TRUE(outer);
  EXPECT_EQ(outer->name, "OuterStruct");
  EXPECT_EQ(outer->pointers, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(dtype_size(a->dtype), 16u);
  const DataDesc* x = sdfg->find_data("A.x");
  ASSERT_TRUE(x && x->structure && x->member);
  EXPECT_EQ(outer->fields[0], std::make_pair(std::string("x"), x->dtype));
  const StructType* inner = struct_of(x->dtype);
  EXPECT_EQ(inner->pointers, (std::vector<std::string>{"a"}));
  EXPECT_EQ(dtype_size(x->dtype), 16u);  // float* then int, padded to 8
  const DataDesc* b = sdfg->find_data("A.x.b");
  ASSERT_TRUE(b && b->member && b->kind == DataKind::Scalar && b->dtype == DType::Int32);
  EXPECT_EQ(sdfg->find_data("A.x.a")->shape.size(), 1u);
  // Written back as DaCe writes it (members inside their structure) and read again unchanged.
  std::string text = write_sdfg(*sdfg);
  Json j = Json::parse(text);
  EXPECT_EQ(j["attributes"]["_arrays"]["A"]["type"], "Structure");
  EXPECT_FALSE(j["attributes"]["_arrays"].contains("A.x"));
  EXPECT_EQ(j["attributes"]["_arrays"]["A"]["attributes"]["members"][0][1]["type"], "Structure");
  auto back = read_sdfg(text);
  EXPECT_EQ(write_sdfg(*back), text);
  EXPECT_EQ(back->find_data("A.x")->dtype, x->dtype);
}

TEST(Reader, StructureProblemsAreNamed) {
  Json j = load_json("structs/for_with_field.sdfg");
  j["attributes"]["_arrays"]["S"]["attributes"]["members"][1][0] = "data";
  auto d = one_problem(j);
  EXPECT_EQ(d.pointer, "/attributes/_arrays/S/attributes/members/1/0");
  EXPECT_EQ(d.message, "structure \"S\" has two members named \"data\"");
  j = load_json("structs/for_with_field.sdfg");
  j["attributes"]["_arrays"]["S"]["attributes"]["members"][0][1]["type"] = "ArrayView";
  d = one_problem(j);
  EXPECT_EQ(d.pointer, "/attributes/_arrays/S/attributes/members/0/1/type");
  EXPECT_EQ(
      d.message,
      "member \"data\" of structure \"S\" is a view; sdfc's structure members are arrays, scalars and structures");
}

TEST(Validate, AMemberNamedLikeAnotherContainerInCxxIsRefused) {
  Json j = load_json("structs/for_with_field.sdfg");
  j["attributes"]["_arrays"]["S_data"] = {{"type", "Scalar"},
                                          {"attributes", {{"dtype", "int32"}, {"transient", true}}}};
  auto d = one_problem(j);
  EXPECT_EQ(d.pointer, "/attributes/_arrays/S_data");
  EXPECT_EQ(d.message,
            "data containers \"S.data\" and \"S_data\" have the same C++ name \"S_data\" (a structure's members are "
            "named <structure>_<member> there); rename one of them");
}
