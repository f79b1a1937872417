#include "passes/ExternalSync.h"

#include <set>

#include "ir/Walk.h"

namespace sdfc {
namespace {

/// The streams of every GPU operation, in the SDFG and every nested one.
std::set<int> used_streams(const SDFG& root) {
  std::set<int> out;
  walk::for_each_sdfg(root, "", [&](const SDFG& s, const std::string& ptr) {
    walk::for_each_state(s, ptr, [&](const Block& st, const std::string&) {
      for (auto& n : st.nodes)
        if (n->stream >= 0) out.insert(n->stream);
      for (auto& e : st.edges)
        if (e.stream >= 0) out.insert(e.stream);
    });
  });
  return out;
}

}  // namespace

void inject_external_sync(SDFG& sdfg, const CompileOptions& options) {
  sdfg.external_sync = options.target != Target::CPU;
  sdfg.sync_streams.clear();
  if (!sdfg.external_sync || options.gpu_streams == 0) return;
  std::set<int> streams = used_streams(sdfg);
  sdfg.sync_streams.assign(streams.begin(), streams.end());
}

}  // namespace sdfc
