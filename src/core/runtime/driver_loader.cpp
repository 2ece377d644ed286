#include "core/runtime/driver_loader.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

#include "core/runtime/errors.hpp"
#include "core/runtime/settings.hpp"

namespace gpupy {

namespace {

bool same_text(const char* a, const char* b) { return a && b && std::strcmp(a, b) == 0; }

// Why the tables a driver was built with differ from the core's, or "".
// Opcodes and dtype codes are the driver ABI: a driver built against
// another ops.def would compute something else for the same number.
std::string table_mismatch(const gpupy_driver_api& api) {
    if (!api.op_rows || api.num_op_rows != gpupy_num_op_rows)
        return "its op table has " + std::to_string(api.op_rows ? api.num_op_rows : 0) + " rows, the core's " +
               std::to_string(gpupy_num_op_rows);
    for (int i = 0; i < gpupy_num_op_rows; ++i) {
        const gpupy_op_row &d = api.op_rows[i], &c = gpupy_op_rows[i];
        if (d.code != c.code || !same_text(d.name, c.name) || !same_text(d.numpy_name, c.numpy_name) ||
            d.arity != c.arity || d.flags != c.flags || d.fold_start != c.fold_start)
            return std::string("op row ") + std::to_string(i) + " is " + (d.name ? d.name : "?") + " = " +
                   std::to_string(d.code) + " in the driver, " + c.name + " = " + std::to_string(c.code) +
                   " in the core";
    }
    if (!api.dtype_rows || api.num_dtype_rows != gpupy_num_dtype_rows)
        return "its dtype table differs in length from the core's";
    for (int i = 0; i < gpupy_num_dtype_rows; ++i) {
        const gpupy_dtype_row &d = api.dtype_rows[i], &c = gpupy_dtype_rows[i];
        if (d.code != c.code || d.itemsize != c.itemsize || !same_text(d.numpy_name, c.numpy_name))
            return std::string("dtype ") + std::to_string(i) + " is " + (d.numpy_name ? d.numpy_name : "?") +
                   " in the driver, " + c.numpy_name + " in the core";
    }
    return "";
}

std::string dir_of_this_module() {
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(&dir_of_this_module), &info) && info.dli_fname) {
        std::string path = info.dli_fname;
        auto slash = path.rfind('/');
        if (slash != std::string::npos) return path.substr(0, slash);
    }
    return ".";
}

}  // namespace

std::string Driver::library_dir() {
    if (std::string dir = driver_dir_from_environment(); !dir.empty()) return dir;
    return dir_of_this_module() + "/_drivers";
}

std::unique_ptr<Driver> Driver::load(const std::string& name) {
    for (char c : name) {
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
            throw DriverError("invalid driver name '" + name + "'");
    }
    const std::string path = library_dir() + "/libgpupy_driver_" + name + ".so";
    // RTLD_LOCAL keeps a driver's dependencies (libGLEW, libEGL) out of the
    // global namespace; the library is never unloaded (GL libraries do not
    // survive dlclose reliably).
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char* err = dlerror();
        throw DriverError("cannot load the " + name + " driver: " + (err ? err : path));
    }
    auto entry = reinterpret_cast<gpupy_driver_entry_fn>(dlsym(lib, GPUPY_DRIVER_ENTRY_SYMBOL));
    if (!entry) throw DriverError(path + " does not export " GPUPY_DRIVER_ENTRY_SYMBOL);
    return from_api(entry(), name, path);
}

std::unique_ptr<Driver> Driver::from_api(const gpupy_driver_api* api, const std::string& name, const std::string& origin) {
    if (!api || api->abi_version != GPUPY_DRIVER_ABI_VERSION) {
        throw DriverError(origin + ": driver ABI version " + std::to_string(api ? api->abi_version : -1) +
                          ", core expects " + std::to_string(GPUPY_DRIVER_ABI_VERSION));
    }
    const std::string mismatch = table_mismatch(*api);
    if (!mismatch.empty()) {
        throw DriverError(origin + " was built with another op or dtype table than this core (" + mismatch +
                          "): rebuild the driver");
    }
    std::unique_ptr<Driver> d(new Driver());
    d->name_ = name;
    d->api_ = api;
    char err[512] = {0};
    if (api->init(&d->ctx_, err, sizeof err) != GPUPY_OK) {
        d->api_ = nullptr;  // nothing to clean up
        throw DriverError("the " + name + " driver failed to initialise: " +
                          (err[0] ? std::string(err) : std::string("no reason given")));
    }
    d->supported_.assign(static_cast<size_t>(GPUPY_NUM_OPS) * GPUPY_NUM_DTYPES, 0);
    for (int op = 0; op < GPUPY_NUM_OPS; ++op) {
        if (!op_valid(op)) continue;  // a retired code
        for (int t = 0; t < GPUPY_NUM_DTYPES; ++t)
            d->supported_[op * GPUPY_NUM_DTYPES + t] = api->get_method(d->ctx_, op, t) ? 1 : 0;
    }
    return d;
}

Driver::~Driver() {
    if (api_ && ctx_) api_->cleanup(ctx_);
}

bool Driver::supports(OpCode op, DType dtype) const {
    if (op < 0 || op >= GPUPY_NUM_OPS || !dtype_valid(dtype)) return false;
    return supported_[op * GPUPY_NUM_DTYPES + dtype] != 0;
}

void Driver::fail(const char* what) {
    const char* msg = api_->last_error(ctx_);
    throw DriverError(name_ + " driver: " + what + " failed: " + (msg && *msg ? msg : "no message"));
}

gpupy_block* Driver::alloc(DType dtype, int64_t nelems) {
    gpupy_block* b = nullptr;
    int rc = api_->block_alloc(ctx_, dtype, nelems, &b);
    if (rc == GPUPY_ERROR_NOMEM) return nullptr;
    if (rc != GPUPY_OK || !b) fail("block_alloc");
    return b;
}

void Driver::free(gpupy_block* b) { api_->block_free(ctx_, b); }

void Driver::read(gpupy_block* b, int64_t offset, int64_t count, void* dst) {
    if (api_->block_read(ctx_, b, offset, count, dst) != GPUPY_OK) fail("block_read");
}

void Driver::write(gpupy_block* b, int64_t offset, int64_t count, const void* src) {
    if (api_->block_write(ctx_, b, offset, count, src) != GPUPY_OK) fail("block_write");
}

bool Driver::check_ir(const gpupy_ir& ir, gpupy_resources* out) {
    int rc = api_->check_ir(ctx_, &ir, out);
    if (rc < 0) fail("check_ir");
    return rc > 0;
}

void Driver::eval_ir(const gpupy_ir& ir, gpupy_block* const* dst) {
    if (api_->eval_ir(ctx_, &ir, dst) != GPUPY_OK) fail("eval_ir");
}

gpupy_resources Driver::resource_get(const gpupy_ir_instr& node) {
    gpupy_resources r{};
    api_->resource_get(ctx_, &node, &r);
    return r;
}

gpupy_resources Driver::resource_zero() {
    gpupy_resources r{};
    api_->resource_zero(ctx_, &r);
    return r;
}

void Driver::resource_add(gpupy_resources* acc, const gpupy_resources& r) { api_->resource_add(ctx_, acc, &r); }
void Driver::resource_sub(gpupy_resources* acc, const gpupy_resources& r) { api_->resource_sub(ctx_, acc, &r); }
bool Driver::resource_check(const gpupy_resources& r) { return api_->resource_check(ctx_, &r) != 0; }

gpupy_block* Driver::wrap(DType dtype, int64_t nelems, void* host) {
    gpupy_block* b = nullptr;
    if (!api_->block_wrap || api_->block_wrap(ctx_, dtype, nelems, host, &b) != GPUPY_OK || !b) fail("block_wrap");
    return b;
}

int Driver::offer_host_loops(const std::vector<HostLoop>& loops) {
    if (!api_->offer_host_loop) return 0;
    int taken = 0;
    for (const HostLoop& l : loops) taken += api_->offer_host_loop(ctx_, l.op, l.dtype, l.loop, l.data) == 1;
    return taken;
}

void Driver::finish() {
    if (api_->finish && api_->finish(ctx_) != GPUPY_OK) fail("finish");
}

std::string Driver::describe() {
    const char* s = api_->describe(ctx_);
    return s ? s : "";
}

void Driver::set_option(const std::string& key, const std::string& value) {
    if (api_->set_option(ctx_, key.c_str(), value.c_str()) != GPUPY_OK) {
        const char* msg = api_->last_error(ctx_);
        throw ValueError(name_ + " driver: cannot set option '" + key + "' to '" + value +
                         "': " + (msg && *msg ? msg : "not understood"));
    }
    ++configuration_;
}

gpupy_driver_counters Driver::counters() {
    gpupy_driver_counters c{};
    api_->get_counters(ctx_, &c);
    return c;
}

}  // namespace gpupy
