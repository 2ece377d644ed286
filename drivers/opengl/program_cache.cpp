#include <cstdio>
#include <cstdlib>
#include "program_cache.hpp"

#include <cctype>
#include <chrono>
#include <set>
#include <sstream>

#include "options.hpp"

namespace gpupy_gl {

namespace {

// Line numbers an info log points at. Mesa writes "0:12(5): error: ...",
// NVIDIA "0(12) : error ...".
std::set<int> log_line_numbers(const std::string& log) {
    std::set<int> lines;
    std::istringstream in(log);
    std::string l;
    while (std::getline(in, l)) {
        size_t i = 0;
        while (i < l.size() && std::isdigit(static_cast<unsigned char>(l[i]))) ++i;
        if (i == 0 || i >= l.size()) continue;
        size_t j = i + 1;
        size_t k = j;
        while (k < l.size() && std::isdigit(static_cast<unsigned char>(l[k]))) ++k;
        if ((l[i] == ':' || l[i] == '(') && k > j) lines.insert(std::stoi(l.substr(j, k - j)));
    }
    return lines;
}

std::string info_log(GLuint object, bool is_program) {
    GLint len = 0;
    if (is_program) glGetProgramiv(object, GL_INFO_LOG_LENGTH, &len);
    else glGetShaderiv(object, GL_INFO_LOG_LENGTH, &len);
    std::string log(len > 0 ? len : 1, '\0');
    if (is_program) glGetProgramInfoLog(object, static_cast<GLsizei>(log.size()), nullptr, &log[0]);
    else glGetShaderInfoLog(object, static_cast<GLsizei>(log.size()), nullptr, &log[0]);
    log.resize(log.find('\0') == std::string::npos ? log.size() : log.find('\0'));
    return log;
}

}  // namespace

std::string numbered_source_excerpt(const std::string& source, const std::string& log) {
    std::vector<std::string> lines;
    std::istringstream in(source);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    std::set<int> marked = log_line_numbers(log);
    const int context = 4;
    std::ostringstream out;
    int last = 0;
    for (int n = 1; n <= static_cast<int>(lines.size()); ++n) {
        bool show = marked.empty();
        for (int m : marked) show = show || (n >= m - context && n <= m + context);
        if (!show) continue;
        if (last && n != last + 1) out << "  ...\n";
        char num[16];
        std::snprintf(num, sizeof num, "%5d", n);
        out << (marked.count(n) ? ">>" : "  ") << num << " | " << lines[n - 1] << "\n";
        last = n;
    }
    return out.str();
}

Program* ProgramCache::find(const std::string& key) {
    auto it = programs_.find(key);
    return it == programs_.end() ? nullptr : it->second.get();
}

// Debug aid: with GPUPY_GL_DUMP_SHADERS=<dir>, every program built is
// written there as program-<n>.comp, to read or profile the generated code.
void ProgramCache::dump_source(const GeneratedShader& shader) {
    const std::string dir = gpupy_driver::env_text("GPUPY_GL_DUMP_SHADERS");
    if (dir.empty()) return;
    std::string path = dir + "/program-" + std::to_string(programs_compiled) + ".comp";
    if (FILE* f = std::fopen(path.c_str(), "w")) {
        std::fwrite(shader.source.data(), 1, shader.source.size(), f);
        std::fclose(f);
    }
}

GLuint build_compute_program(const std::string& source, std::string& error) {
    GLuint cs = glCreateShader(GL_COMPUTE_SHADER);
    const char* text = source.c_str();
    glShaderSource(cs, 1, &text, nullptr);
    glCompileShader(cs);
    GLint ok = 0;
    glGetShaderiv(cs, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        std::string log = info_log(cs, false);
        glDeleteShader(cs);
        error = "GLSL compile failed:\n" + log + "\n" + numbered_source_excerpt(source, log);
        return 0;
    }
    GLuint prog = glCreateProgram();
    glAttachShader(prog, cs);
    glLinkProgram(prog);
    glDetachShader(prog, cs);
    glDeleteShader(cs);
    glGetProgramiv(prog, GL_LINK_STATUS, &ok);
    if (!ok) {
        std::string log = info_log(prog, true);
        glDeleteProgram(prog);
        error = "GLSL link failed:\n" + log + "\n" + numbered_source_excerpt(source, log);
        return 0;
    }
    return prog;
}

Program* ProgramCache::get_or_build(GeneratedShader&& shader, std::string& error) {
    if (Program* p = find(shader.key)) {
        ++cache_hits;
        return p;
    }
    dump_source(shader);
    auto t0 = std::chrono::steady_clock::now();
    const GLuint prog = build_compute_program(shader.source, error);
    if (!prog) return nullptr;
    auto p = std::make_unique<Program>();
    p->id = prog;
    p->params_location = glGetUniformLocation(prog, "u_p");
    for (int k = 0; k < GPUPY_MAX_OUTPUTS; ++k) {
        const std::string name = k ? "u_ident" + std::to_string(k) : "u_ident";
        p->ident_location[k] = glGetUniformLocation(prog, name.c_str());
    }
    for (int i : shader.const_instrs) {
        p->const_locations.push_back(glGetUniformLocation(prog, ("u_c" + std::to_string(i)).c_str()));
    }
    for (const auto& a : shader.const_arrays) p->array_locations.push_back(glGetUniformLocation(prog, a.name.c_str()));
    p->shader = std::move(shader);
    compile_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
    ++programs_compiled;
    Program* raw = p.get();
    programs_[raw->shader.key] = std::move(p);
    return raw;
}

void ProgramCache::clear() {
    for (auto& kv : programs_) glDeleteProgram(kv.second->id);
    programs_.clear();
}

}  // namespace gpupy_gl
