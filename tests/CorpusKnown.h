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
  static const std::vector<KnownUnsupported> list = {
      // empty: every corpus file runs (views, complex numbers, statement tasklets and library
      // nodes landed with issue 15); a construct that is refused again goes here with its issue
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
