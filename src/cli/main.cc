#include "cli/cli.h"

int main(int argc, char** argv) { return baton::RunCli(argc, argv); }
