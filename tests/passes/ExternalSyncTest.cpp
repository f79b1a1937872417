// external-sync: the entry/exit steps against the caller's stream fork and join exactly the
// internal streams the program uses, and the IR dump shows them.
#include "TestUtil.h"
#include "compiler/Compile.h"
#include "ir/Dump.h"
#include "passes/Pipeline.h"

using namespace sdfc;
using namespace sdfc::test;

TEST(ExternalSync, ForksAndJoinsTheStreamsTheProgramUses) {
  if (corpus_dir().empty()) GTEST_SKIP() << "corpus not found";

  struct Case {
    Target target;
    int streams;
    bool sync;
    std::vector<int> used;
  };
  for (const Case& c : {Case{Target::CPU, 0, false, {}}, Case{Target::CUDA, 0, true, {}},
                        Case{Target::CUDA, 1, true, {0}}, Case{Target::CUDA, 4, true, {0, 1}}}) {
    SCOPED_TRACE(c.streams);
    // the cpu file on the cpu: legalize refuses GPU schedules there
    auto sdfg = load_sdfg_file(corpus_dir() + "/forkjoin2x2_s/" +
                               (c.target == Target::CPU ? "program.sdfg" : "program_gpu.sdfg"));
    CompileOptions o;
    o.target = c.target;
    o.gpu_streams = c.streams;
    run_pipeline(*sdfg, o);
    EXPECT_EQ(sdfg->external_sync, c.sync);
    EXPECT_EQ(sdfg->sync_streams, c.used);
    std::string text = dump(*sdfg);
    if (c.sync) {
      EXPECT_NE(text.find("entry: the caller's stream waits for the previous call if it changed;"), std::string::npos)
          << text;
      EXPECT_NE(text.find("exit: "), std::string::npos);
    }
    if (!c.used.empty()) {
      std::string list = c.used.size() == 1 ? "0" : "0,1";
      EXPECT_NE(text.find("internal streams(" + list + ") wait for the caller's stream"), std::string::npos) << text;
    }
  }
}
