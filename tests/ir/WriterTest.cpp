#include "TestUtil.h"
#include "ir/Builder.h"
#include "ir/Dump.h"

using namespace sdfc;
using namespace sdfc::test;

TEST(Writer, ConvertingOwnOutputIsByteIdentical) {
  auto a = read_sdfg(slurp(data_path("small.sdfg")));
  std::string once = write_sdfg(*a);
  auto b = read_sdfg(once);
  EXPECT_EQ(write_sdfg(*b), once);
  EXPECT_EQ(dump(*a), dump(*b));
}

namespace {

/// cfg_list_id of every control-flow region in DaCe's order (all_control_flow_regions: a region,
/// then the blocks inside it in order, nested SDFGs where their states hold them, branches of a
/// conditional after it).
void cfg_ids_in_dace_order(const Json& j, std::vector<int>& out) {
  if (j.contains("cfg_list_id")) out.push_back(j["cfg_list_id"].get<int>());
  if (j.contains("branches"))
    for (auto& br : j["branches"]) cfg_ids_in_dace_order(br[1], out);
  if (!j.contains("nodes")) return;
  for (auto& n : j["nodes"]) {
    if (n["type"] == "NestedSDFG")
      cfg_ids_in_dace_order(n["attributes"]["sdfg"], out);
    else
      cfg_ids_in_dace_order(n, out);
  }
}

}  // namespace

TEST(Writer, CfgListIdsAreInDaCesPreOrder) {
  std::vector<std::string> files = {data_path("small.sdfg")};
  if (!corpus_dir().empty())
    for (const char* c : {"nested_top_s", "cond_datadep_s", "heat2d_loop_s"})
      files.push_back(corpus_dir() + "/" + c + "/program.sdfg");
  for (auto& f : files) {
    Json out = Json::parse(write_sdfg(*read_sdfg(slurp(f))));
    std::vector<int> ids;
    cfg_ids_in_dace_order(out, ids);
    ASSERT_GE(ids.size(), 2u) << f;
    for (std::size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(ids[i], static_cast<int>(i)) << f;
  }
}

TEST(Writer, KeepsVersionTypesAndUnmodelledFields) {
  Json in = load_json("small.sdfg");
  in["attributes"]["_arrays"]["A"]["attributes"]["guid"] = "1234";
  in["nodes"][0]["nodes"][2]["attributes"]["debuginfo"] = {{"type", "DebugInfo"}, {"start_line", 3}};
  Json out = Json::parse(write_sdfg(*read_sdfg(in.dump())));
  EXPECT_EQ(out["dace_version"], "2.0.0a6");
  EXPECT_EQ(out["type"], "SDFG");
  EXPECT_EQ(out["attributes"]["_arrays"]["A"]["attributes"]["guid"], "1234");
  EXPECT_EQ(out["nodes"][0]["nodes"][2]["attributes"]["debuginfo"]["start_line"], 3);
  EXPECT_EQ(out["nodes"][0]["type"], "SDFGState");
  EXPECT_EQ(out["nodes"][0]["nodes"][2]["type"], "Tasklet");
  // Fields DaCe needs: scope_dict recomputed, memlet derived subsets, typed symbols kept
  EXPECT_EQ(out["nodes"][0]["scope_dict"]["0"], Json::array({1, 2}));
  auto& m = out["nodes"][0]["edges"][1]["attributes"]["data"]["attributes"];
  EXPECT_EQ(m["subset"]["ranges"][0]["start"], "symbol($i, dtype=dace.int64)");
  EXPECT_EQ(m["src_subset"], m["subset"]);
  EXPECT_EQ(m["is_data_src"], true);
  EXPECT_EQ(out["attributes"]["_arrays"]["A"]["attributes"]["shape"][0], "$N");
}

TEST(Writer, OldVersionWritesPlainExpressions) {
  Json in = load_json("small.sdfg");
  in["dace_version"] = "0.14.1";
  in["attributes"]["_arrays"]["A"]["attributes"]["shape"][0] = "N";
  Json out = Json::parse(write_sdfg(*read_sdfg(in.dump())));
  EXPECT_EQ(out["dace_version"], "0.14.1");
  EXPECT_EQ(out["attributes"]["_arrays"]["A"]["attributes"]["shape"][0], "N");
  EXPECT_EQ(out["nodes"][0]["nodes"][0]["attributes"]["range"]["ranges"][0]["end"], "-1 + N");
}

TEST(Writer, OmitsDefaultsButKeepsWhatDaCeAlwaysWrites) {
  auto sdfg = SDFGBuilder("d").symbol("N").array("A", DType::Float64, {"N"}).build();
  Json out = to_json(*sdfg);
  const Json& a = out["attributes"]["_arrays"]["A"]["attributes"];
  EXPECT_FALSE(a.contains("storage"));
  EXPECT_FALSE(a.contains("lifetime"));
  EXPECT_FALSE(a.contains("transient"));
  EXPECT_EQ(a["dtype"], "float64");
  EXPECT_EQ(a["strides"], Json::array({"1"}));
  EXPECT_EQ(a["total_size"], "$N");
}

TEST(Writer, Int64SymbolsUseTheTypedSpelling) {
  auto sdfg = SDFGBuilder("t").symbol("N", DType::Int64).array("A", DType::Float64, {"N"}).build();
  // A builder expression names N without a type; a typed file keeps whatever type it read.
  Json in = to_json(*sdfg);
  in["attributes"]["_arrays"]["A"]["attributes"]["shape"][0] = "symbol($N, dtype=dace.int64)";
  Json out = to_json(*read_sdfg(in.dump()));
  EXPECT_EQ(out["attributes"]["_arrays"]["A"]["attributes"]["shape"][0], "symbol($N, dtype=dace.int64)");
}

// DaCe's callback symbols and pointer connectors (tests/codegen/cpu/dace_callbacks.sdfg, made by
// DaCe's frontend) are read into the IR and written back as DaCe spells them.
TEST(Writer, CallbacksAndPointerConnectorsRoundTrip) {
  auto a = read_sdfg(slurp(data_path("../codegen/cpu/dace_callbacks.sdfg")));
  ASSERT_EQ(a->callbacks.size(), 3u);
  const Callback* product = a->find_callback("product");
  ASSERT_TRUE(product);
  EXPECT_EQ(product->arguments.size(), 2u);
  EXPECT_TRUE(product->arguments[0].array);
  EXPECT_EQ(product->results.size(), 2u);
  EXPECT_FALSE(product->returns_scalar());
  const Callback* clock = a->find_callback("clock");
  ASSERT_TRUE(clock);
  EXPECT_TRUE(clock->returns_scalar());
  EXPECT_FALSE(a->symbol_type("clock"));
  std::string once = write_sdfg(*a);
  auto b = read_sdfg(once);
  EXPECT_EQ(write_sdfg(*b), once);
  EXPECT_EQ(dump(*a), dump(*b));
  EXPECT_NE(dump(*a).find("callback product(float64[], float64[]) -> (float64[], float64[]), results through pointers"),
            std::string::npos);
  EXPECT_NE(once.find(R"("__out_res":{"type":"pointer","dtype":"float64"})"), std::string::npos);
}
