// A minimal test harness for the core's C++ tests: TEST(name) registers a
// function, CHECK* record failures with file and line, main() runs every
// test (or those named on the command line) and exits non-zero on failure.
#pragma once

#include <cstdio>
#include <functional>
#include <sstream>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace check {

struct Test {
    const char* name;
    std::function<void()> fn;
};

inline std::vector<Test>& registry() {
    static std::vector<Test> tests;
    return tests;
}

inline int& failures() {
    static int n = 0;
    return n;
}

struct Register {
    Register(const char* name, std::function<void()> fn) { registry().push_back({name, std::move(fn)}); }
};

inline void fail(const char* file, int line, const std::string& what) {
    ++failures();
    std::fprintf(stderr, "  %s:%d: %s\n", file, line, what.c_str());
}

template <class T, class = void>
struct Streamable : std::false_type {};
template <class T>
struct Streamable<T, std::void_t<decltype(std::declval<std::ostream&>() << std::declval<const T&>())>> : std::true_type {};

template <class T>
void show(std::ostream& s, const T& v) {
    if constexpr (Streamable<T>::value) s << v;
    else s << "<value>";
}
template <class T>
void show(std::ostream& s, const std::vector<T>& v) {
    s << "[";
    for (size_t i = 0; i < v.size(); ++i) {
        if (i) s << ", ";
        show(s, v[i]);
    }
    s << "]";
}

template <class A, class B>
std::string describe(const A& a, const B& b) {
    std::ostringstream s;
    show(s, a);
    s << " != ";
    show(s, b);
    return s.str();
}

}  // namespace check

#define CHECK_CONCAT2(a, b) a##b
#define CHECK_CONCAT(a, b) CHECK_CONCAT2(a, b)
#define TEST(name)                                                              \
    static void name();                                                         \
    static check::Register CHECK_CONCAT(register_, name)(#name, name);          \
    static void name()

#define CHECK(cond)                                                  \
    do {                                                             \
        if (!(cond)) check::fail(__FILE__, __LINE__, "CHECK(" #cond ")"); \
    } while (0)

#define CHECK_EQ(a, b)                                                                                  \
    do {                                                                                                \
        /* copies: an operand may be an element of a temporary */                                      \
        const auto check_a_ = (a);                                                                      \
        const auto check_b_ = (b);                                                                      \
        if (!(check_a_ == check_b_))                                                                    \
            check::fail(__FILE__, __LINE__, "CHECK_EQ(" #a ", " #b "): " + check::describe(check_a_, check_b_)); \
    } while (0)

#define CHECK_THROWS(expr, type)                                                         \
    do {                                                                                 \
        bool check_thrown_ = false;                                                      \
        try {                                                                            \
            (void)(expr);                                                                \
        } catch (const type&) {                                                          \
            check_thrown_ = true;                                                        \
        }                                                                                \
        if (!check_thrown_) check::fail(__FILE__, __LINE__, #expr " did not throw " #type); \
    } while (0)
