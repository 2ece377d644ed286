#include "glsl_library.hpp"

#include <sstream>

#include "glsl_sources.hpp"  // generated: kGlslSources[] = {file name, text}

namespace gpupy_glsl {

static const char kMarker[] = "// @function ";

std::string GlslLibrary::add_file(const std::string& file_name, const std::string& text) {
    std::istringstream in(text);
    std::string line;
    Function* current = nullptr;
    std::string errors;
    while (std::getline(in, line)) {
        size_t start = line.find_first_not_of(" \t");
        if (start != std::string::npos && line.compare(start, sizeof kMarker - 1, kMarker) == 0) {
            std::istringstream words(line.substr(start + sizeof kMarker - 1));
            std::string name, word;
            words >> name;
            if (name.empty()) {
                errors += file_name + ": @function marker without a name\n";
                current = nullptr;
                continue;
            }
            if (functions_.count(name)) {
                errors += file_name + ": @function " + name + " defined again (first in " +
                          functions_[name].source_file + ")\n";
                current = nullptr;
                continue;
            }
            Function f;
            f.name = name;
            f.source_file = file_name;
            if (words >> word) {
                if (word != "requires") {
                    errors += file_name + ": @function " + name + ": expected 'requires', got '" + word + "'\n";
                }
                while (words >> word) f.requires_.push_back(word);
            }
            current = &(functions_[name] = f);
            continue;
        }
        // Text before the first marker (a file's header comment) belongs to
        // no function.
        if (current) current->text += line + "\n";
    }
    return errors;
}

std::string GlslLibrary::check_dependencies() const {
    std::string errors;
    for (const auto& [name, f] : functions_) {
        for (const std::string& dep : f.requires_) {
            if (!functions_.count(dep)) errors += f.source_file + ": " + name + " requires unknown " + dep + "\n";
        }
    }
    return errors;
}

bool GlslLibrary::include(const std::string& name, std::vector<std::string>& order,
                          std::set<std::string>& seen) const {
    if (seen.count(name)) return true;
    auto it = functions_.find(name);
    if (it == functions_.end()) return false;
    seen.insert(name);  // before recursing: a dependency cycle cannot loop
    for (const std::string& dep : it->second.requires_) {
        if (!include(dep, order, seen)) return false;
    }
    order.push_back(name);
    return true;
}

namespace {
struct Embedded {
    GlslLibrary library;
    std::string errors;
    Embedded() {
        for (const auto& src : kGlslSources) errors += library.add_file(src.name, src.text);
        errors += library.check_dependencies();
    }
};
const Embedded& embedded_instance() {
    static const Embedded e;
    return e;
}
}  // namespace

const GlslLibrary& GlslLibrary::embedded() { return embedded_instance().library; }
const std::string& GlslLibrary::embedded_errors() { return embedded_instance().errors; }

}  // namespace gpupy_glsl
