// Device blocks as 2D textures.
//
// A block of n elements is laid out row-major in a texture of width
// min(n, W) and height ceil(n / W), W being one width for the whole driver
// (block_width, default min(kDefaultTextureWidth, GL_MAX_TEXTURE_SIZE)). Element e lives at
// texel (e % W, e / W) whatever the block's size, so generated code needs W
// only, as a compile-time constant. One texel holds one element (see
// dtype_formats), so host transfers need no conversion.
#ifndef GPUPY_OPENGL_BLOCK_TEXTURES_HPP
#define GPUPY_OPENGL_BLOCK_TEXTURES_HPP

#include <GL/glew.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_set>

#include "glsl_codegen.hpp"
#include "gpupy/driver.hpp"

struct gpupy_block {
    GLuint texture;
    int32_t dtype;
    int64_t nelems;
    int32_t width, height;
    int64_t bytes;  // device memory charged to the budget
};

namespace gpupy_gl {

class BlockTextures {
public:
    void configure(int width, int max_height, int64_t budget_bytes) {
        trim_spares(0);
        width_ = width;
        max_height_ = max_height;
        budget_bytes_ = budget_bytes;
    }
    int width() const { return width_; }
    // Textures of freed blocks kept for the next block of their shape
    // (allocating and deleting device memory for every result costs a GPU
    // driver more than a small dispatch): at most kMaxSpares of them and
    // spare_limit() bytes, the oldest deleted first; their bytes count
    // against the budget with the live blocks', spares going first when a
    // new block needs the room. A reused texture's contents are undefined,
    // as a new one's are.
    static constexpr size_t kMaxSpares = 16;
    static constexpr int64_t kMaxSpareBytes = int64_t(256) << 20;
    int64_t spare_limit() const {
        return budget_bytes_ > 0 ? std::min(budget_bytes_ / 8, kMaxSpareBytes) : kMaxSpareBytes;
    }
    int64_t spare_bytes() const { return spare_bytes_; }
    int64_t textures_reused() const { return reused_; }
    int64_t max_block_elems() const { return static_cast<int64_t>(width_) * max_height_; }
    int64_t budget_bytes() const { return budget_bytes_; }
    void set_budget_bytes(int64_t b) {
        budget_bytes_ = b;
        trim_spares(spare_limit());
    }
    int64_t used_bytes() const { return used_bytes_; }
    size_t live_blocks() const { return live_.size(); }
    bool owns(const gpupy_block* b) const { return live_.count(const_cast<gpupy_block*>(b)) != 0; }

    // GPUPY_OK, GPUPY_ERROR_NOMEM (budget or GL_OUT_OF_MEMORY) or GPUPY_ERROR;
    // `error` says why on failure.
    int alloc(int32_t dtype, int64_t nelems, gpupy_block** out, std::string& error);
    void free(gpupy_block* block);
    void free_all();
    int read(gpupy_block* block, int64_t offset, int64_t count, void* dst, std::string& error);
    int write(gpupy_block* block, int64_t offset, int64_t count, const void* src, std::string& error);

private:
    struct Spare {
        GLuint texture;
        GLenum format;
        int32_t width, height;
        int64_t bytes;
    };
    bool check_range(const gpupy_block* block, int64_t offset, int64_t count, std::string& error) const;
    // Deletes the oldest spares until they hold at most `bytes`.
    void trim_spares(int64_t bytes);
    // A spare texture of that format and size, taken from the spares; 0 if
    // none.
    GLuint take_spare(GLenum format, int width, int height);
    // A new texture of that format and size into *out, the spares deleted
    // first where the budget or the device needs their room; GPUPY_OK,
    // GPUPY_ERROR_NOMEM or GPUPY_ERROR (`error` says why).
    int new_texture(GLenum format, int width, int height, int64_t bytes, GLuint* out, std::string& error);
    std::deque<Spare> spares_;
    int64_t spare_bytes_ = 0;
    int64_t reused_ = 0;

    int width_ = gpupy_glsl::kDefaultTextureWidth;
    int max_height_ = 16384;
    int64_t budget_bytes_ = 0;  // 0: no budget of our own, only GL_OUT_OF_MEMORY
    int64_t used_bytes_ = 0;
    std::unordered_set<gpupy_block*> live_;
};

}  // namespace gpupy_gl

#endif
