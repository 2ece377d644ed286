// GLSL function libraries embedded in the driver.
//
// Two sets of GLSL files are embedded at build time (embed_glsl.cmake):
// drivers/glsl/glsl_math/ (accurate float32 functions gp_<numpy_name>,
// written separately) and drivers/glsl/glsl_runtime/ (the drivers' own
// helpers gpo_*: integer division, float bit tests, casts). Both use one format: each
// function is preceded by a marker line
//     // @function NAME [requires DEP1 DEP2 ...]
// and its text runs to the next marker. A shader includes only the
// functions it calls plus their dependencies, dependencies first.
#ifndef GPUPY_GLSL_GLSL_LIBRARY_HPP
#define GPUPY_GLSL_GLSL_LIBRARY_HPP

#include <map>
#include <set>
#include <string>
#include <vector>

namespace gpupy_glsl {

class GlslLibrary {
public:
    struct Function {
        std::string name, source_file, text;
        std::vector<std::string> requires_;
    };

    // Parses one file; returns "" or a message (duplicate name, ...).
    std::string add_file(const std::string& file_name, const std::string& text);
    // Checks every dependency names a function; returns "" or a message.
    std::string check_dependencies() const;

    bool has(const std::string& name) const { return functions_.count(name) != 0; }
    const std::map<std::string, Function>& functions() const { return functions_; }

    // Appends `name` and what it requires (dependencies first) to `order`,
    // skipping those already in `seen`. False if a name is missing.
    bool include(const std::string& name, std::vector<std::string>& order, std::set<std::string>& seen) const;
    const std::string& text(const std::string& name) const { return functions_.at(name).text; }

    // The embedded glsl_math and glsl_runtime files, parsed once.
    static const GlslLibrary& embedded();
    // Problems found parsing the embedded files ("" if none).
    static const std::string& embedded_errors();

private:
    std::map<std::string, Function> functions_;
};

}  // namespace gpupy_glsl

#endif
