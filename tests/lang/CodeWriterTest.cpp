// The printer base (lang/CodeWriter.h): names from the input file become safe identifiers,
// string literals and comments, whatever they hold.
#include <gtest/gtest.h>

#include "lang/CodeWriter.h"

using namespace sdfc;

TEST(CodeWriter, IdentifiersFromArbitraryNames) {
  EXPECT_EQ(ident("x"), "x");
  EXPECT_EQ(ident("class"), "class_");  // C++ keywords get a suffix
  EXPECT_EQ(ident("2d"), "_2d");        // a leading digit gets a prefix
  EXPECT_EQ(ident("a b;$(rm -rf /)"), "a_b___rm__rf___");
  EXPECT_EQ(ident(""), "_");
  EXPECT_TRUE(is_identifier("x_1"));
  EXPECT_FALSE(is_identifier("class"));
  EXPECT_FALSE(is_identifier("a-b"));
}

TEST(CodeWriter, StringLiteralsEscapeEverything) {
  EXPECT_EQ(c_string("a\"b\\c\nd\te\x01"), "\"a\\\"b\\\\c\\nd\\te\\001\"");
}

TEST(CodeWriter, CommentsStayOneComment) {
  CodeWriter w;
  w.open("void f()");
  w.line("// state \"s\nint injected = 1;\" (/nodes/0)");
  w.line("// tasklet t\\");
  w.line("int x = 0;");
  w.line("// bell \x07 and \r");
  w.close();
  EXPECT_EQ(w.str(),
            "void f() {\n"
            "  // state \"s\\nint injected = 1;\" (/nodes/0)\n"
            "  // tasklet t\\.\n"
            "  int x = 0;\n"
            "  // bell \\x07 and \\r\n"
            "}\n");
}
