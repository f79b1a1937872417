// The IR file (ir/IrFile.h): written and read back exactly after every pass, over the corpus, and
// the passes after it give the program the whole pipeline gives; the pass-order rules of sdfc opt;
// decisions that cannot be read name their pointer; an IR file is not taken for a DaCe file.
#include <fmt/format.h>
#include <gmock/gmock.h>

#include <filesystem>
#include <sstream>

#include "CorpusKnown.h"
#include "TestUtil.h"
#include "codegen/Codegen.h"
#include "compiler/Compile.h"
#include "ir/Dump.h"
#include "ir/IrFile.h"
#include "passes/Pipeline.h"

using namespace sdfc;
using namespace sdfc::test;
namespace fs = std::filesystem;

namespace {

/// Every program of the corpus that compiles for `target` (program.sdfg and program_gpu.sdfg of
/// each case, neither on the known-unsupported list).
std::vector<std::string> corpus_programs(bool gpu) {
  std::vector<std::string> files;
  std::string dir = corpus_dir();
  if (dir.empty()) return files;
  for (auto& e : fs::directory_iterator(dir)) {
    fs::path f = e.path() / (gpu ? "program_gpu.sdfg" : "program.sdfg");
    if (!fs::exists(f)) continue;
    if (find_known_unsupported(f.string())) continue;
    files.push_back(f.string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string sources(const GeneratedProgram& p) {
  std::string all;
  for (auto& f : p.files) all += "// file " + f.name + "\n" + f.text;
  return all;
}

CompileOptions options(const std::string& text) {
  CompileOptions o;
  std::istringstream in(text);
  std::string name, value;
  while (in >> name >> value) find_option(name)->set(o, value);
  return o;
}

/// Runs the pipeline on `file` pass by pass; after each pass the IR file is written and read back
/// (the same text again, the same dump) and the passes after it, run on what was read, give the
/// whole pipeline's program. Returns the number of passes checked (0 when the program is refused).
int check_every_pass(const std::string& file, const CompileOptions& o) {
  auto sdfg = read_sdfg_file(file);
  std::string whole;
  {
    auto copy = read_sdfg_file(file);
    try {
      run_pipeline(*copy, o);
      whole = sources(generate(*copy, o, "f"));
    } catch (const UserError&) {
      return 0;  // refused with these options: the corpus tests check the message
    }
  }
  int checked = 0;
  for (auto& name : pass_names()) {
    SCOPED_TRACE("after " + name);
    run_passes(*sdfg, {name}, o);
    std::string text = write_ir(*sdfg, o);
    IrFile back = read_ir(text, file);
    EXPECT_TRUE(back.from_sdfc);
    EXPECT_EQ(options_key(back.options), options_key(o));
    EXPECT_EQ(write_ir(*back.sdfg, back.options), text);
    EXPECT_EQ(dump(*back.sdfg), dump(*sdfg));
    run_pipeline(*back.sdfg, back.options);
    EXPECT_EQ(sources(generate(*back.sdfg, back.options, "f")), whole);
    ++checked;
  }
  return checked;
}

}  // namespace

TEST(IrFile, RoundTripsAfterEveryPassOverTheCorpusAndTheRestGivesTheSameProgram) {
  auto cpu = corpus_programs(false), gpu = corpus_programs(true);
  if (cpu.empty()) GTEST_SKIP() << "corpus not found (set SDFC_CORPUS; default " << SDFC_DEFAULT_CORPUS << ")";
  int programs = 0, passes = 0;
  auto run = [&](const std::vector<std::string>& files, const std::string& opts) {
    for (auto& f : files) {
      SCOPED_TRACE(f + " with " + opts);
      int n = check_every_pass(f, options(opts));
      programs += n > 0;
      passes += n;
    }
  };
  run(cpu, "target cpu");
  run(cpu, "target cpu transients external fuse_maps true blas vendor");
  run(gpu, "target cuda");
  run(gpu, "target cuda gpu_streams 3 transients pool");
  run(gpu, "target cuda gpu_graph true transients external");
  EXPECT_GT(programs, 100);
  std::cout << "[ ir file  ] " << programs << " compiles, " << passes << " pass boundaries round-tripped\n";
}

TEST(IrFile, PassOrderIsThePipelinesWithEveryRequirement) {
  EXPECT_EQ(check_pass_order({}, {"expand-library-nodes", "fold-views"}), "");
  EXPECT_EQ(check_pass_order({"expand-library-nodes"}, {"fold-views", "normalize", "fuse-maps"}), "");
  EXPECT_THAT(check_pass_order({}, {"normalize"}), testing::HasSubstr("needs \"fold-views\""));
  EXPECT_THAT(check_pass_order({"expand-library-nodes"}, {"expand-library-nodes"}),
              testing::HasSubstr("has already run"));
  EXPECT_THAT(check_pass_order({}, {"fold-views", "expand-library-nodes"}), testing::HasSubstr("needs"));
  std::vector<std::string> upto_sync;
  for (auto& n : pass_names()) {
    upto_sync.push_back(n);
    if (n == "synchronization") break;
  }
  EXPECT_THAT(check_pass_order(upto_sync, {"legalize"}), testing::HasSubstr("has already run"));
  EXPECT_THAT(
      check_pass_order({"expand-library-nodes", "fold-views", "normalize", "transient-lifetimes"}, {"fuse-maps"}),
      testing::HasSubstr("\"fuse-maps\" cannot run after \"transient-lifetimes\""));
  EXPECT_THAT(check_pass_order({}, {"no-such-pass"}), testing::HasSubstr("unknown pass \"no-such-pass\""));
  // Every requirement names an earlier pass.
  for (std::size_t i = 0; i < pass_infos().size(); ++i)
    for (auto& need : pass_infos()[i].requires_) {
      auto at = std::find(pass_names().begin(), pass_names().end(), need) - pass_names().begin();
      EXPECT_LT(static_cast<std::size_t>(at), i) << pass_infos()[i].name << " needs " << need;
    }
}

TEST(IrFile, ThePipelineGoesOnFromTheLastPassAndRefusesOneLeftOut) {
  auto sdfg = read_sdfg(slurp(std::string(SDFC_CODEGEN_TESTS) + "/cpu/copy_subset.sdfg"));
  CompileOptions o;
  run_passes(*sdfg, {"expand-library-nodes", "fold-views", "normalize"}, o);
  IrFile back = read_ir(write_ir(*sdfg, o));
  run_pipeline(*back.sdfg, back.options);
  EXPECT_EQ(back.sdfg->passes_run, pass_names());

  auto skipped = read_sdfg(slurp(std::string(SDFC_CODEGEN_TESTS) + "/cpu/copy_subset.sdfg"));
  run_passes(*skipped, {"expand-library-nodes", "fold-views", "normalize", "transient-lifetimes"}, o);
  try {
    run_pipeline(*skipped, o);
    FAIL() << "a pipeline with fuse-maps left out ran";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("pass \"fuse-maps\" did not run on this IR file"));
  }
}

TEST(IrFile, UnreadableDecisionsNameTheirPointer) {
  auto sdfg = read_sdfg(slurp(std::string(SDFC_CODEGEN_TESTS) + "/cuda/fused_chain.sdfg"));
  CompileOptions o;
  o.target = Target::CUDA;
  run_pipeline(*sdfg, o);
  Json j = ir_to_json(*sdfg, o);
  auto expect_error = [&](Json doc, const std::string& pointer, const std::string& text) {
    try {
      read_ir(doc.dump());
      ADD_FAILURE() << "read: " << pointer;
    } catch (const UserError& e) {
      EXPECT_EQ(e.diagnostic().pointer, pointer);
      EXPECT_THAT(e.what(), testing::HasSubstr(text));
    }
  };
  Json bad = j;
  bad["sdfc"]["format"] = 99;
  expect_error(bad, "/sdfc/format", "IR files of format 3");
  bad = j;
  bad["sdfc"]["options"]["target"] = "fpga";
  expect_error(bad, "/sdfc/options/target", "target must be");
  bad = j;
  bad["sdfc"]["options"]["colour"] = "red";
  expect_error(bad, "/sdfc/options/colour", "unknown compile option");
  bad = j;
  bad["sdfc"]["num_events"] = "many";
  expect_error(bad, "/sdfc/num_events", "unexpected string");
  // A kernel plan with an unknown parameter kind, wherever the first kernel is.
  bool kernel = false;
  for (std::size_t i = 0; i < j["nodes"][0]["nodes"].size(); ++i)
    if (j["nodes"][0]["nodes"][i].contains("sdfc") && j["nodes"][0]["nodes"][i]["sdfc"].contains("kernel")) {
      bad = j;
      bad["nodes"][0]["nodes"][i]["sdfc"]["kernel"]["params"][0][0] = "Telepathy";
      expect_error(bad, fmt::format("/nodes/0/nodes/{}/sdfc/kernel/params/0/kind", i), "unknown value \"Telepathy\"");
      kernel = true;
      break;
    }
  EXPECT_TRUE(kernel) << "no kernel plan in the first state";
}

TEST(IrFile, IsNotTakenForADaceFile) {
  auto sdfg = read_sdfg(slurp(std::string(SDFC_CODEGEN_TESTS) + "/cpu/copy_subset.sdfg"));
  CompileOptions o;
  run_passes(*sdfg, {"expand-library-nodes"}, o);
  try {
    load_sdfg_text(write_ir(*sdfg, o), "ir.sdfg");
    FAIL() << "an IR file was loaded as a DaCe file";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("this is an sdfc IR file"));
  }
  // A DaCe file read as an IR file: no header, no passes, default options.
  IrFile dace = read_ir(slurp(std::string(SDFC_CODEGEN_TESTS) + "/cpu/copy_subset.sdfg"));
  EXPECT_FALSE(dace.from_sdfc);
  EXPECT_TRUE(dace.sdfg->passes_run.empty());
}
