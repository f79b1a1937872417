// The option table (ir/Options.h): every row parses what it prints, refuses what it does not take,
// and reaches the build cache key.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "ir/Options.h"

using namespace sdfc;

namespace {

/// A value of `o` other than its default, in the form `set` takes.
std::string other_value(const OptionSpec& o, const CompileOptions& defaults) {
  std::string d = o.get(defaults);
  switch (o.kind) {
    case OptionSpec::Kind::Switch:
      return o.switch_value;
    case OptionSpec::Kind::Number:
      return d == "3" ? "4" : "3";
    case OptionSpec::Kind::Text:
      return d + "x";
    case OptionSpec::Kind::Choice:
      for (auto& v : o.values)
        if (v != d) return v;
  }
  return d;
}

}  // namespace

TEST(Options, EveryRowReadsBackWhatItWritesAndItsFlagFindsIt) {
  std::set<std::string> names, flags;
  CompileOptions defaults;
  for (auto& o : option_table()) {
    EXPECT_TRUE(names.insert(o.name).second) << o.name;
    EXPECT_TRUE(flags.insert(o.flag).second) << o.flag;
    EXPECT_EQ(find_option(o.name), &o);
    EXPECT_EQ(find_option_flag(o.flag), &o);
    EXPECT_EQ(std::string(o.flag).rfind("--", 0), 0u) << o.flag;
    EXPECT_EQ(o.kind == OptionSpec::Kind::Switch, *o.switch_value != 0) << o.name;
    EXPECT_EQ(o.kind == OptionSpec::Kind::Choice, !o.values.empty()) << o.name;
    CompileOptions c;
    o.set(c, o.get(defaults));
    EXPECT_EQ(options_key(c), options_key(defaults)) << o.name;
    for (auto& v : o.values) {
      o.set(c, v);
      EXPECT_EQ(o.get(c), v) << o.name;
    }
  }
  EXPECT_EQ(find_option("streams"), nullptr);
  EXPECT_EQ(find_option_flag("--streams"), nullptr);
}

TEST(Options, EveryRowReachesTheCacheKey) {
  // The cache key is derived from the table: each option's change is a different key (a row whose
  // get() forgot its field would hand out a stale build).
  CompileOptions defaults;
  for (auto& o : option_table()) {
    CompileOptions c;
    o.set(c, other_value(o, defaults));
    EXPECT_NE(options_key(c), options_key(defaults)) << o.name;
    EXPECT_NE(options_key(c).find(std::string(o.name) + " "), std::string::npos) << o.name;
  }
}

TEST(Options, ValuesARowDoesNotTakeAreRefusedNamingTheValues) {
  CompileOptions c;
  auto message = [&](const char* name, const std::string& v) -> std::string {
    try {
      find_option(name)->set(c, v);
    } catch (const OptionError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(message("target", "fpga"), "must be cpu, cuda or hip, not 'fpga'");
  EXPECT_EQ(message("transients", "heap"), "must be as-declared, scoped, persistent, pool or external, not 'heap'");
  EXPECT_EQ(message("gpu_streams", "-1"), "must be 0 or more, not -1");
  EXPECT_EQ(message("gpu_streams", "1025"), "must be at most 1024, not 1025");
  EXPECT_EQ(message("gpu_streams", "2x"), "needs a whole number, not '2x'");
  EXPECT_EQ(message("gpu_streams", "99999999999999999999"), "needs a whole number, not '99999999999999999999'");
  EXPECT_EQ(message("fuse_maps", "yes"), "must be true or false, not 'yes'");
  EXPECT_EQ(message("blas", ""), "must be pure or vendor, not ''");
  EXPECT_EQ(message("gpu_streams", "1024"), "");
  EXPECT_EQ(c.gpu_streams, 1024);
}
