// The synchronization verifier: every corpus GPU program is proven in every stream and memory
// mode; schedules with an event or a host wait removed are caught, naming both accesses.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "TestUtil.h"
#include "compiler/Compile.h"
#include "passes/Pipeline.h"
#include "passes/VerifySync.h"

using namespace sdfc;
using namespace sdfc::test;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> gpu_programs() {
  std::vector<std::string> out;
  for (auto& f : supported_corpus_gpu_programs()) out.push_back(corpus_dir() + "/" + f);
  return out;
}

CompileOptions cuda(int streams) {
  CompileOptions o;
  o.target = Target::CUDA;
  o.gpu_streams = streams;
  return o;
}

std::unique_ptr<SDFG> scheduled(const std::string& file, int streams, TransientMode mode = TransientMode::AsDeclared) {
  auto sdfg = load_sdfg_file(file);
  CompileOptions o = cuda(streams);
  o.transients = mode;
  run_pipeline(*sdfg, o);
  return sdfg;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (auto& l : lines) s += l + "\n";
  return s;
}

}  // namespace

TEST(VerifySync, EveryCorpusGpuProgramIsProvenInEveryMode) {
  auto files = gpu_programs();
  if (files.empty()) GTEST_SKIP() << "corpus not found";
  for (const std::string& f : files)
    for (int streams : {0, 1, 2, 4})
      for (TransientMode mode :
           {TransientMode::AsDeclared, TransientMode::External, TransientMode::Pool, TransientMode::Persistent}) {
        SCOPED_TRACE(fmt::format("{} --gpu-streams {} --transients {}", f, streams, to_string(mode)));
        auto sdfg = scheduled(f, streams, mode);
        SyncReport r = verify_sync(*sdfg, cuda(streams));
        EXPECT_TRUE(r.ok()) << joined(r.races);
        EXPECT_GT(r.paths, 0);
      }
}

TEST(VerifySync, AMissingEventBetweenStreamsIsCaught) {
  if (corpus_dir().empty()) GTEST_SKIP() << "corpus not found";
  auto sdfg = scheduled(corpus_dir() + "/forkjoin2x2_s/program_gpu.sdfg", 2);
  ASSERT_TRUE(verify_sync(*sdfg, cuda(2)).ok());
  // Remove the merge kernel's wait for the event the other branch records.
  int removed = 0;
  for (auto& n : sdfg->root.blocks[0]->nodes)
    if (!n->wait_events.empty()) {
      n->wait_events.clear();
      ++removed;
    }
  ASSERT_EQ(removed, 1);
  SyncReport r = verify_sync(*sdfg, cuda(2));
  ASSERT_FALSE(r.ok());
  std::string all = joined(r.races);
  EXPECT_NE(
      all.find("kernel v_second_map in state \"forkjoin2x2_s_copyin\" writes on stream 1 and kernel merge_map in state "
               "\"forkjoin2x2_s_copyin\" reads on stream 0 are not ordered (container v2)"),
      std::string::npos)
      << all;
}

TEST(VerifySync, AMissingForkIsCaught) {
  if (corpus_dir().empty()) GTEST_SKIP() << "corpus not found";
  auto sdfg = scheduled(corpus_dir() + "/forkjoin2x2_s/program_gpu.sdfg", 2, TransientMode::Pool);
  ASSERT_TRUE(verify_sync(*sdfg, cuda(2)).ok());
  // Without the fork, stream 1 may start before the pool allocations on stream 0.
  sdfg->root.blocks[0]->fork_event = -1;
  SyncReport r = verify_sync(*sdfg, cuda(2));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(joined(r.races).find("the pool allocation of v1 (stream 0) writes on stream 0 and kernel v_first_map"),
            std::string::npos)
      << joined(r.races);
}

TEST(VerifySync, AMissingHostWaitIsCaught) {
  if (corpus_dir().empty()) GTEST_SKIP() << "corpus not found";
  for (int streams : {0, 2}) {
    auto sdfg = scheduled(corpus_dir() + "/cond_datadep_s/program_gpu.sdfg", streams);
    ASSERT_TRUE(verify_sync(*sdfg, cuda(streams)).ok());
    // Drop every host wait: the host then reads a value a device-to-host copy may still write.
    std::vector<Block*> work{&sdfg->root};
    int removed = 0;
    while (!work.empty()) {
      Block* b = work.back();
      work.pop_back();
      removed += static_cast<int>(b->host_waits.size());
      b->host_waits.clear();
      for (auto& e : b->cf_edges) {
        removed += static_cast<int>(e.host_waits.size());
        e.host_waits.clear();
      }
      for (auto& n : b->nodes) {
        removed += static_cast<int>(n->host_waits.size());
        n->host_waits.clear();
      }
      for (auto& c : b->blocks) work.push_back(c.get());
      for (auto& [c, body] : b->branches) work.push_back(body.get());
    }
    ASSERT_GT(removed, 0);
    SyncReport r = verify_sync(*sdfg, cuda(streams));
    ASSERT_FALSE(r.ok()) << "--gpu-streams " << streams;
    EXPECT_NE(joined(r.races).find("reads on the host are not ordered"), std::string::npos) << joined(r.races);
  }
}
