// One test per validation error: each checks the message and the JSON pointer.
#include "TestUtil.h"
#include "ir/Builder.h"

using namespace sdfc;
using namespace sdfc::test;

namespace {

// tests/data/small.sdfg: state 0 has nodes [0] map entry, [1] map exit, [2] tasklet t(a) -> (b),
// [3] access A, [4] access B and edges 0: 3->0:IN_A, 1: 0:OUT_A->2:a, 2: 2:b->1:IN_B,
// 3: 1:OUT_B->4. Root blocks: 0 state, 1 loop, 2 conditional; root edges 0->1, 1->2.
Json small() {
  return load_json("small.sdfg");
}
Json& state0(Json& j) {
  return j["nodes"][0];
}
Json& memlet(Json& j, int edge) {
  return state0(j)["edges"][edge]["attributes"]["data"]["attributes"];
}

}  // namespace

TEST(Validate, SmallFileIsValid) {
  EXPECT_TRUE(problems(small()).empty());
}

TEST(Validate, DanglingEdgeSource) {
  Json j = small();
  state0(j)["edges"][1]["src"] = "17";
  auto ds = problems(j);
  ASSERT_EQ(ds.size(), 2u);  // and the map's OUT_A is now really left without an edge
  auto d = ds[0];
  EXPECT_EQ(d.pointer, "/nodes/0/edges/1/src");
  EXPECT_EQ(d.message, "edge starts at node 17, which does not exist (the state has 5 nodes)");
  EXPECT_EQ(
      d.str(),
      "test.sdfg: /nodes/0/edges/1/src: error: edge starts at node 17, which does not exist (the state has 5 nodes)");
}

TEST(Validate, DanglingEdgeDestination) {
  Json j = small();
  state0(j)["edges"][3]["dst"] = "5";
  auto ds = problems(j);
  ASSERT_FALSE(ds.empty());
  EXPECT_EQ(ds[0].pointer, "/nodes/0/edges/3/dst");
  EXPECT_EQ(ds[0].message, "edge ends at node 5, which does not exist (the state has 5 nodes)");
}

TEST(Validate, UnknownDataInAccessNode) {
  Json j = small();
  state0(j)["nodes"][4]["attributes"]["data"] = "C";
  auto d = one_problem(j);
  EXPECT_EQ(d.pointer, "/nodes/0/nodes/4/attributes/data");
  EXPECT_EQ(d.message, "access node refers to unknown data \"C\"; declare it in /attributes/_arrays");
}

TEST(Validate, UnknownDataInMemlet) {
  Json j = small();
  memlet(j, 1)["data"] = "Z";
  auto d = one_problem(j);
  EXPECT_EQ(d.pointer, "/nodes/0/edges/1/attributes/data/attributes/data");
  EXPECT_EQ(d.message, "memlet refers to unknown data \"Z\"; declare it in /attributes/_arrays");
}

TEST(Validate, SubsetProvablyPastTheEnd) {
  Json j = small();
  memlet(j, 0)["subset"]["ranges"][0]["end"] = "$N";
  auto d = one_problem(j);
  EXPECT_EQ(d.pointer, "/nodes/0/edges/0/attributes/data/attributes/subset/ranges/0/end");
  EXPECT_EQ(d.message, "subset ends at N in dimension 0 of \"A\", 1 past its last index -1 + N");
}

TEST(Validate, AllowOobMemletsAreNotBoundsChecked) {
  // DaCe's validation skips memlets marked allow_oob; so does sdfc's.
  Json j = small();
  memlet(j, 0)["subset"]["ranges"][0]["end"] = "$N";
  memlet(j, 0)["allow_oob"] = true;
  EXPECT_TRUE(problems(j).empty());
  // The same, written symbol(N, dtype) on one side: still one symbol N.
  j = small();
  memlet(j, 0)["subset"]["ranges"][0]["end"] = "symbol($N, dtype=dace.int64)";
  EXPECT_EQ(one_problem(j).message, "subset ends at N in dimension 0 of \"A\", 1 past its last index -1 + N");
}

TEST(Validate, SubsetProvablyBeforeTheStart) {
  Json j = small();
  memlet(j, 0)["subset"]["ranges"][0]["start"] = "-2";
  auto d = one_problem(j);
  EXPECT_EQ(d.pointer, "/nodes/0/edges/0/attributes/data/attributes/subset/ranges/0/start");
  EXPECT_EQ(d.message, "subset starts at -2 in dimension 0 of \"A\", before its first element");
}

TEST(Validate, SubsetThatMightFitIsNotABoundsError) {
  Json j = small();
  // On its own, i + 1 may or may not be in bounds: not provably wrong, so not a bounds error (DaCe
  // accepts it). Over the map's range it reaches past the memlet outside the scope, which is.
  memlet(j, 1)["subset"]["ranges"][0]["start"] = "1 + $i";
  memlet(j, 1)["subset"]["ranges"][0]["end"] = "1 + $i";
  auto d = one_problem(j);
  EXPECT_EQ(d.message.find("subset ends at"), std::string::npos) << d.message;
  EXPECT_NE(d.message.find("outside the memlet on the scope's other side"), std::string::npos) << d.message;
}

TEST(Validate, SubsetWithWrongDimensionCount) {
  Json j = small();
  memlet(j, 1)["subset"]["ranges"].push_back(memlet(j, 1)["subset"]["ranges"][0]);
  auto d = one_problem(j);
  EXPECT_EQ(d.pointer, "/nodes/0/edges/1/attributes/data/attributes/subset");
  EXPECT_EQ(d.message, "subset has 2 dimensions but \"A\" has 1");
}

TEST(Validate, ConnectorWithoutEdge) {
  Json j = small();
  state0(j)["nodes"][2]["attributes"]["in_connectors"]["unused"] = nullptr;
  auto d = one_problem(j);
  EXPECT_EQ(d.pointer, "/nodes/0/nodes/2/attributes/in_connectors/unused");
  EXPECT_EQ(d.message, "input connector \"unused\" of \"t\" has no incoming edge");
}

TEST(Validate, OutputConnectorWithoutEdge) {
  Json j = small();
  state0(j)["nodes"][2]["attributes"]["out_connectors"]["extra"] = nullptr;
  auto d = one_problem(j);
  EXPECT_EQ(d.pointer, "/nodes/0/nodes/2/attributes/out_connectors/extra");
  EXPECT_EQ(d.message, "output connector \"extra\" of \"t\" has no outgoing edge");
}

TEST(Validate, EdgeToUndeclaredConnector) {
  Json j = small();
  state0(j)["edges"][1]["dst_connector"] = "q";
  auto ds = problems(j);
  ASSERT_EQ(ds.size(), 2u);  // the edge's connector, and the now-unconnected "a"
  EXPECT_EQ(ds[0].pointer, "/nodes/0/edges/1/dst_connector");
  EXPECT_EQ(ds[0].message, "edge enters connector \"q\", which node 2 (\"t\") does not declare");
  EXPECT_EQ(ds[1].pointer, "/nodes/0/nodes/2/attributes/in_connectors/a");
}

TEST(Validate, EdgeWithoutConnectorIntoTasklet) {
  Json j = small();
  state0(j)["edges"][1]["dst_connector"] = nullptr;
  auto ds = problems(j);
  ASSERT_EQ(ds.size(), 2u);
  EXPECT_EQ(ds[0].pointer, "/nodes/0/edges/1/dst_connector");
  EXPECT_EQ(ds[0].message, "edge enters tasklet \"t\" without a connector");
}

TEST(Validate, MapExitWithoutEntry) {
  Json j = small();
  state0(j)["nodes"][1]["scope_entry"] = "3";
  auto ds = problems(j);
  ASSERT_FALSE(ds.empty());
  EXPECT_EQ(ds[0].pointer, "/nodes/0/nodes/1/scope_entry");
  EXPECT_EQ(ds[0].message, "map exit \"m\" has no matching map entry");
}

TEST(Validate, MapEntryWithoutExit) {
  Json j = small();
  state0(j)["nodes"][0]["scope_exit"] = "2";
  auto ds = problems(j);
  ASSERT_FALSE(ds.empty());
  EXPECT_EQ(ds[0].pointer, "/nodes/0/nodes/0/scope_exit");
  EXPECT_EQ(ds[0].message, "map entry \"m\" has no matching map exit");
}

TEST(Validate, CycleInsideAState) {
  Json j = small();
  Json back = state0(j)["edges"][3];
  back["src"] = "4";
  back["dst"] = "3";
  back["src_connector"] = nullptr;
  back["dst_connector"] = nullptr;
  state0(j)["edges"].push_back(back);
  auto d = one_problem(j);
  EXPECT_EQ(d.pointer, "/nodes/0/nodes/0");
  EXPECT_EQ(d.message, "state \"s0\" has a cycle through node 0 (\"m\"); dataflow inside a state must be acyclic");
}

TEST(Validate, InterstateEdgeToMissingBlock) {
  Json j = small();
  j["edges"][1]["dst"] = "9";
  auto d = one_problem(j);
  EXPECT_EQ(d.pointer, "/edges/1/dst");
  EXPECT_EQ(d.message, "interstate edge leads to block 9, which does not exist (the region has 3 blocks)");
}

TEST(Validate, StartBlockMissing) {
  Json j = small();
  j["start_block"] = 7;
  auto d = one_problem(j);
  EXPECT_EQ(d.pointer, "/start_block");
  EXPECT_EQ(d.message, "start block 7 does not exist; the region has 3 blocks");
}

TEST(Validate, TwoDataContainersWithOneName) {
  // JSON parsers merge duplicate keys silently; sdfc reports them.
  std::string text = slurp(data_path("small.sdfg"));
  auto pos = text.find("\"B\":{\"type\":\"Array\"");
  ASSERT_NE(pos, std::string::npos);
  text.replace(pos, 3, "\"A\"");
  auto ds = problems(text);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].pointer, "/attributes/_arrays/A");
  EXPECT_EQ(ds[0].message, "two data containers are named \"A\"; rename one of them");
}

TEST(Validate, InvalidSdfgName) {
  Json j = small();
  j["attributes"]["name"] = "my program";
  auto ds = problems(j);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].pointer, "/attributes/name");
  EXPECT_EQ(
      ds[0].message,
      "the SDFG name \"my program\" is not a valid name; expected letters, digits and '_', not starting with a digit "
      "(as DaCe requires)");
}

TEST(Validate, InvalidDataContainerName) {
  std::string text = slurp(data_path("small.sdfg"));
  auto pos = text.find("\"B\":{\"type\":\"Array\"");
  ASSERT_NE(pos, std::string::npos);
  text.replace(pos, 3, "\"2B\"");
  auto ds = problems(text);
  ASSERT_GE(ds.size(), 1u);  // the access node and memlets of B now name unknown data too
  EXPECT_EQ(ds[0].pointer, "/attributes/_arrays/2B");
  EXPECT_EQ(
      ds[0].message,
      "data container name \"2B\" is not a valid name; expected letters, digits and '_', not starting with a digit "
      "(as DaCe requires)");
}

TEST(Validate, UndefinedSymbols) {
  // In a map range, in a shape and in an interstate condition; map parameters and symbols that
  // interstate edges assign are defined.
  Json j = small();
  state0(j)["nodes"][0]["attributes"]["range"]["ranges"][0]["end"] = "M - 1";
  auto d = one_problem(j);
  EXPECT_EQ(d.pointer, "/nodes/0/nodes/0/attributes/range/ranges/0/end");
  EXPECT_EQ(d.message, "undefined symbol \"M\" in the range of map \"" +
                           state0(j)["nodes"][0]["attributes"]["label"].get<std::string>() +
                           "\"; declare it in the SDFG's symbols, assign it on an interstate edge, or (inside a map) "
                           "make it a map parameter");
  j = small();
  j["attributes"]["_arrays"]["A"]["attributes"]["shape"][0] = "K";
  d = one_problem(j);
  EXPECT_EQ(d.pointer, "/attributes/_arrays/A/attributes/shape/0");
  EXPECT_NE(d.message.find("undefined symbol \"K\" in the shape of \"A\""), std::string::npos) << d.message;
  j = small();
  j["edges"][0]["attributes"]["data"]["attributes"]["condition"]["string_data"] = "zz > 0";
  d = one_problem(j);
  EXPECT_EQ(d.pointer, "/edges/0/attributes/data/attributes/condition");
  EXPECT_NE(d.message.find("undefined symbol \"zz\" in the interstate edge's condition"), std::string::npos)
      << d.message;
  // Assigned on an edge: defined
  j["edges"][0]["attributes"]["data"]["attributes"]["assignments"]["zz"] = "N + 1";
  EXPECT_TRUE(problems(j).empty());
}

TEST(Validate, UndefinedSymbolsInLoopsAndConditionals) {
  // The conditions of conditional blocks and loops and a loop's init and update statements: a
  // symbol removed from a GT4Py file (gt_metrics_level) reached the C++ compiler so (mutants).
  Json j = small();
  j["nodes"][2]["branches"][0][0]["string_data"] = "gt_metrics_level >= 10";
  auto d = one_problem(j);
  EXPECT_EQ(d.pointer, "/nodes/2/branches/0/0/string_data");
  EXPECT_NE(d.message.find("undefined symbol \"gt_metrics_level\" in the condition of branch 0 of conditional"),
            std::string::npos)
      << d.message;
  j = small();
  j["nodes"][1]["attributes"]["loop_condition"]["string_data"] = "it < NSTEPS";
  d = one_problem(j);
  EXPECT_EQ(d.pointer, "/nodes/1/attributes/loop_condition/string_data");
  EXPECT_NE(d.message.find("undefined symbol \"NSTEPS\" in the condition of loop"), std::string::npos) << d.message;
  j = small();
  j["nodes"][1]["attributes"]["init_statement"]["string_data"] = "it = start";
  j["nodes"][1]["attributes"]["update_statement"]["string_data"] = "it = it + step";
  auto ds = problems(j);
  ASSERT_EQ(ds.size(), 2u);
  EXPECT_EQ(ds[0].pointer, "/nodes/1/attributes/init_statement/string_data");
  EXPECT_NE(ds[0].message.find("undefined symbol \"start\" in the init statement of loop"), std::string::npos);
  EXPECT_EQ(ds[1].pointer, "/nodes/1/attributes/update_statement/string_data");
  EXPECT_NE(ds[1].message.find("undefined symbol \"step\" in the update statement of loop"), std::string::npos);
  // Declared: valid.
  j["attributes"]["symbols"]["start"] = "int32";
  j["attributes"]["symbols"]["step"] = "int32";
  EXPECT_TRUE(problems(j).empty());
}

TEST(Validate, MemletSymbolsMustBeDefinedAroundTheEdge) {
  // A map parameter renamed without its uses (44 of 1,500 mutants reached the C++ compiler so).
  Json j = small();
  std::string param = state0(j)["nodes"][0]["attributes"]["params"][0];
  state0(j)["nodes"][0]["attributes"]["params"][0] = "renamed";
  auto ds = problems(j);
  ASSERT_FALSE(ds.empty());
  EXPECT_EQ(ds[0].pointer, "/nodes/0/edges/1/attributes/data/attributes/subset/ranges/0/start");
  EXPECT_EQ(ds[0].message, "undefined symbol \"" + param +
                               "\" in the memlet of \"A\"; declare it in the SDFG's symbols, assign it on an "
                               "interstate edge, or (inside a map) make it a map parameter");
  // Outside the map its parameter is not defined either.
  j = small();
  memlet(j, 3)["subset"]["ranges"][0]["start"] = param;
  ds = problems(j);
  ASSERT_FALSE(ds.empty());
  EXPECT_EQ(ds[0].pointer, "/nodes/0/edges/3/attributes/data/attributes/subset/ranges/0/start");
  // nan is no index.
  j = small();
  memlet(j, 1)["subset"]["ranges"][0]["end"] = "nan";
  ds = problems(j);
  ASSERT_FALSE(ds.empty());
  EXPECT_EQ(ds[0].pointer, "/nodes/0/edges/1/attributes/data/attributes/subset/ranges/0/end");
  EXPECT_EQ(ds[0].message, "the memlet of \"A\" uses \"nan\", which is not an integer; subsets index elements");
  // A symbol the SDFG declares shadows the constant of the same name (DaCe's frontend names
  // symbols E, e, pi, ...).
  for (const char* name : {"E", "e", "pi", "nan", "oo"}) {
    j = small();
    j["attributes"]["symbols"][name] = "int64";
    memlet(j, 1)["subset"]["ranges"][0]["end"] = name;
    for (auto& d : problems(j)) EXPECT_EQ(d.message.find("not an integer"), std::string::npos) << d.message;
  }
}

TEST(Validate, UnknownDataInANestedSdfgPointsAtItsOwnContainers) {
  if (corpus_dir().empty()) GTEST_SKIP() << "corpus not found";
  Json j = Json::parse(slurp(corpus_dir() + "/nested_top_s/program.sdfg"));
  std::string where;
  for (std::size_t b = 0; b < j["nodes"].size() && where.empty(); ++b)
    for (std::size_t n = 0; n < j["nodes"][b]["nodes"].size() && where.empty(); ++n) {
      Json& node = j["nodes"][b]["nodes"][n];
      if (node["type"] != "NestedSDFG") continue;
      Json& st = node["attributes"]["sdfg"]["nodes"][0];
      for (std::size_t k = 0; k < st["nodes"].size(); ++k)
        if (st["nodes"][k]["type"] == "AccessNode") {
          st["nodes"][k]["attributes"]["data"] = "zzz";
          where = "/nodes/" + std::to_string(b) + "/nodes/" + std::to_string(n) + "/attributes/sdfg";
          break;
        }
    }
  ASSERT_FALSE(where.empty());
  auto ds = problems(j);
  ASSERT_GE(ds.size(), 1u);
  EXPECT_EQ(ds[0].message,
            "access node refers to unknown data \"zzz\"; declare it in " + where + "/attributes/_arrays");
}

TEST(Validate, ElseBranchMustBeLast) {
  Json j = small();
  auto& br = j["nodes"][2]["branches"];
  std::swap(br[0], br[1]);
  auto d = one_problem(j);
  EXPECT_EQ(d.pointer, "/nodes/2/branches/0/0");
  EXPECT_EQ(d.message, "an else branch (null condition) must be the last branch of a conditional");
}

TEST(Validate, NegativeExtent) {
  Json j = small();
  j["attributes"]["_arrays"]["A"]["attributes"]["shape"][0] = "-3";
  auto ds = problems(j);
  ASSERT_FALSE(ds.empty());
  EXPECT_EQ(ds[0].pointer, "/attributes/_arrays/A/attributes/shape/0");
  EXPECT_EQ(ds[0].message, "data \"A\" has a negative extent -3 in dimension 0");
}

TEST(Validate, ReportsEveryProblemNotJustTheFirst) {
  Json j = small();
  state0(j)["nodes"][4]["attributes"]["data"] = "C";
  j["edges"][1]["dst"] = "9";
  EXPECT_EQ(problems(j).size(), 2u);
}

TEST(Validate, ScopeEntriesFollowTheEdges) {
  // The fuzzer removed a tasklet's scope_entry: it sat outside the map its edges go into and out
  // of, and the code generator left an access node unprinted (an internal error).
  Json j = small();
  state0(j)["nodes"][2]["scope_entry"] = nullptr;
  auto ds = problems(j);
  ASSERT_EQ(ds.size(), 4u);  // and the map parameter in the memlet of edge 2 is undefined outside the map
  EXPECT_EQ(ds[0].pointer, "/nodes/0/edges/1");
  EXPECT_EQ(ds[0].message,
            "edge from map entry \"m\" to tasklet \"t\" crosses a scope boundary: it leaves the first in map \"m\" "
            "(node 0), but the second is outside any map; a node's scope_entry must follow its edges (into a map only "
            "through its entry, out of it only through its exit)");
  EXPECT_EQ(ds[1].pointer, "/nodes/0/edges/2");
  // An access node placed inside the map while its edges run outside it.
  Json k = small();
  state0(k)["nodes"][4]["scope_entry"] = "0";
  auto d = one_problem(k);
  EXPECT_EQ(d.pointer, "/nodes/0/edges/3");
  EXPECT_NE(d.message.find("it leaves the first outside any map, but the second is in map \"m\" (node 0)"),
            std::string::npos)
      << d.message;
}

/// A map with a step reaches its range's end only where the step lands on it: A[2:10:2] = 2 is the
/// map 2:9:2 (points 2..8) under the outer memlet [2, 8] (DaCe's slice_test::test_literal_slice).
TEST(Validate, StepsEndWhereTheyLand) {
  SDFGBuilder b("slicer");
  b.array("A", DType::Float64, {"20"});
  b.state("s").mapped_tasklet("assign", {{"i", "2:9:2"}}, {}, "o = 2", {{"o", "A[i]"}});
  auto sdfg = b.build();
  Block& st = *sdfg->root.blocks[0];
  for (auto& e : st.edges)
    if (st.node(e.src).kind == NodeKind::MapExit) e.memlet.subset = parse_subset("2:9");  // [2, 8]
  for (auto& d : validate(*sdfg)) ADD_FAILURE() << d.message;
  for (auto& e : st.edges)
    if (st.node(e.src).kind == NodeKind::MapExit) e.memlet.subset = parse_subset("2:8");  // [2, 7]: misses 8
  auto diags = validate(*sdfg);
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_NE(diags[0].message.find("reaches [2, 8] in dimension 0"), std::string::npos) << diags[0].message;
}

/// An outer memlet that misses part of what the scope reads (a stencil's neighbour) is refused:
/// the passes order GPU work by the outer memlets.
TEST(Validate, OuterMemletsMustCoverTheScopesAccesses) {
  SDFGBuilder b("stencil");
  b.symbol("N").array("u", DType::Float64, {"N + 2"}).array("t", DType::Float64, {"N + 2"});
  b.state("s").mapped_tasklet("st", {{"i", "1:N + 1"}}, {{"c", "u[i]"}, {"n", "u[i - 1]"}}, "o = c + n",
                              {{"o", "t[i]"}});
  auto sdfg = b.build();
  EXPECT_TRUE(validate(*sdfg).empty());
  Block& st = *sdfg->root.blocks[0];
  for (auto& e : st.edges)
    if (st.node(e.dst).kind == NodeKind::MapEntry) e.memlet.subset = parse_subset("1:N + 1");  // misses u[0]
  auto diags = validate(*sdfg);
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_NE(diags[0].message.find("the memlet of \"u\" inside map \"st\" reaches [0, -1 + N] in dimension 0 over the "
                                  "map's range, outside the memlet on the scope's other side [1, N]"),
            std::string::npos)
      << diags[0].message;
  EXPECT_NE(diags[0].message.find("propagate_memlets_sdfg"), std::string::npos);
}
