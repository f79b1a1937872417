#include <iostream>

#include "compiler/Cli.h"

int main(int argc, char** argv) { return sdfc::run_cli(argc, argv, std::cout, std::cerr); }
