// Runs the core's C++ tests: all of them, or those named as arguments;
// --list prints their names.
#include <cstdio>
#include <cstring>
#include <exception>

#include "check.hpp"

int main(int argc, char** argv) {
    if (argc == 2 && std::strcmp(argv[1], "--list") == 0) {
        for (const check::Test& t : check::registry()) std::printf("%s\n", t.name);
        return 0;
    }
    int run = 0, failed_tests = 0;
    for (const check::Test& t : check::registry()) {
        bool selected = argc < 2;
        for (int i = 1; i < argc && !selected; ++i) selected = std::strcmp(argv[i], t.name) == 0;
        if (!selected) continue;
        const int before = check::failures();
        std::fprintf(stderr, "%s\n", t.name);
        try {
            t.fn();
        } catch (const std::exception& e) {
            check::fail(__FILE__, __LINE__, std::string("uncaught exception: ") + e.what());
        }
        ++run;
        if (check::failures() > before) {
            ++failed_tests;
            std::fprintf(stderr, "FAILED %s\n", t.name);
        }
    }
    std::printf("%d tests, %d failed\n", run, failed_tests);
    return run == 0 || failed_tests ? 1 : 0;
}
