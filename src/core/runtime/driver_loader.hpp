// Loading drivers (drivers/<name> built as libgpupy_driver_<name>.so) and
// calling them through thin wrappers that turn status codes into C++
// exceptions carrying the driver's own message.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpupy/driver.hpp"
#include "core/graph/dtype.hpp"
#include "core/graph/op_table.hpp"

namespace gpupy {

// An elementwise inner loop of NumPy's for `op` with operands of `dtype`.
struct HostLoop {
    OpCode op;
    DType dtype;
    gpupy_host_loop loop;
    void* data;
};

class Driver {
public:
    // Loads and initialises driver `name`; throws DriverError saying why not.
    static std::unique_ptr<Driver> load(const std::string& name);
    // Checks and initialises a driver from its api table (the core's own
    // tables must match); `origin` names it in errors. load() ends here; a
    // test links a driver in and calls this directly.
    static std::unique_ptr<Driver> from_api(const gpupy_driver_api* api, const std::string& name,
                                            const std::string& origin);
    // Where driver libraries are looked for: $GPUPY_DRIVER_DIR, else the
    // _drivers folder next to the core module.
    static std::string library_dir();

    ~Driver();
    Driver(const Driver&) = delete;
    Driver& operator=(const Driver&) = delete;

    const std::string& name() const { return name_; }
    // Capability table, filled once at load (get_method).
    bool supports(OpCode op, DType dtype) const;
    bool stores(DType dtype) const { return supports(GPUPY_OP_LOAD, dtype); }

    // nullptr when the device is out of memory (the cache evicts and retries).
    gpupy_block* alloc(DType dtype, int64_t nelems);
    void free(gpupy_block* b);
    void read(gpupy_block* b, int64_t offset, int64_t count, void* dst);
    void write(gpupy_block* b, int64_t offset, int64_t count, const void* src);
    bool check_ir(const gpupy_ir& ir, gpupy_resources* out);
    // Output k of `ir` into dst[k].
    void eval_ir(const gpupy_ir& ir, gpupy_block* const* dst);

    gpupy_resources resource_get(const gpupy_ir_instr& node);
    gpupy_resources resource_zero();
    void resource_add(gpupy_resources* acc, const gpupy_resources& r);
    void resource_sub(gpupy_resources* acc, const gpupy_resources& r);
    bool resource_check(const gpupy_resources& r);

    // The optional block_wrap capability (host memory used in place).
    bool can_wrap() const { return api_->block_wrap != nullptr; }
    gpupy_block* wrap(DType dtype, int64_t nelems, void* host);
    // The driver's judgement (prefers_host), or -1 if it offers none.
    int prefers_host(int64_t elements, int64_t ops) const {
        return api_->prefers_host ? (api_->prefers_host(ctx_, elements, ops) ? 1 : 0) : -1;
    }

    // Offers each loop through the optional offer_host_loop; returns how
    // many the driver took.
    int offer_host_loops(const std::vector<HostLoop>& loops);
    // Waits for the work handed to the device (the optional finish).
    void finish();

    std::string describe();
    void set_option(const std::string& key, const std::string& value);
    // How many options were set since the driver was loaded: what the
    // driver answers (resource checks, code) may differ after each, so
    // anything remembered from its answers keys on this too.
    uint64_t configuration() const { return configuration_; }
    gpupy_driver_counters counters();

private:
    Driver() = default;
    [[noreturn]] void fail(const char* what);

    std::string name_;
    const gpupy_driver_api* api_ = nullptr;
    void* ctx_ = nullptr;
    std::vector<uint8_t> supported_;  // [op * GPUPY_NUM_DTYPES + dtype]
    uint64_t configuration_ = 0;
};

}  // namespace gpupy
