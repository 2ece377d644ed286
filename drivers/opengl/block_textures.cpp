#include "block_textures.hpp"

#include <algorithm>
#include <functional>

#include "texture_formats.hpp"
#include "gl_errors.hpp"

namespace gpupy_gl {

int BlockTextures::alloc(int32_t dtype, int64_t nelems, gpupy_block** out, std::string& error) {
    *out = nullptr;
    if (!gpupy::dtype_valid(dtype)) {
        error = "block_alloc: unknown dtype " + std::to_string(dtype);
        return GPUPY_ERROR;
    }
    if (nelems < 0 || nelems > max_block_elems()) {
        error = "block_alloc: " + std::to_string(nelems) + " elements; a block holds 0 to " +
                std::to_string(max_block_elems()) + " (block_width x GL_MAX_TEXTURE_SIZE)";
        return GPUPY_ERROR;
    }
    const TextureFormat& fmt = texture_format(dtype);
    const int itemsize = gpupy::dtype_itemsize(dtype);
    // An empty block still gets one texel: GL has no empty textures.
    int width = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(nelems, width_)));
    int height = static_cast<int>(std::max<int64_t>(1, (nelems + width_ - 1) / width_));
    int64_t bytes = static_cast<int64_t>(width) * height * itemsize;
    GLuint tex = take_spare(fmt.internal_format, width, height);
    if (!tex) {
        if (int rc = new_texture(fmt.internal_format, width, height, bytes, &tex, error); rc != GPUPY_OK) return rc;
    }
    auto* block = new gpupy_block{tex, dtype, nelems, width, height, bytes};
    live_.insert(block);
    used_bytes_ += bytes;
    *out = block;
    return GPUPY_OK;
}

GLuint BlockTextures::take_spare(GLenum format, int width, int height) {
    const auto same_shape = [&](const Spare& s) { return s.format == format && s.width == width && s.height == height; };
    const auto spare = std::find_if(spares_.rbegin(), spares_.rend(), same_shape);
    if (spare == spares_.rend()) return 0;
    const GLuint tex = spare->texture;
    spare_bytes_ -= spare->bytes;
    spares_.erase(std::next(spare).base());
    ++reused_;
    return tex;
}

int BlockTextures::new_texture(GLenum format, int width, int height, int64_t bytes, GLuint* out, std::string& error) {
    if (budget_bytes_ > 0) {
        trim_spares(std::max<int64_t>(0, budget_bytes_ - used_bytes_ - bytes));
        if (used_bytes_ + bytes > budget_bytes_) {
            error = "block_alloc: memory budget of " + std::to_string(budget_bytes_) + " bytes reached";
            return GPUPY_ERROR_NOMEM;
        }
    }
    clear_gl_errors();
    GLuint tex = 0;
    GLenum err = GL_NO_ERROR;
    for (int attempt = 0; attempt < 2; ++attempt) {
        glCreateTextures(GL_TEXTURE_2D, 1, &tex);
        glTextureStorage2D(tex, 1, format, width, height);
        err = glGetError();
        if (err == GL_NO_ERROR) break;
        glDeleteTextures(1, &tex);
        clear_gl_errors();
        // The device's own limit, below the budget: the spares give way,
        // and the allocation is tried once more.
        if (err != GL_OUT_OF_MEMORY || spares_.empty()) break;
        trim_spares(0);
    }
    if (err == GL_OUT_OF_MEMORY) {
        error = "block_alloc: GL_OUT_OF_MEMORY";
        return GPUPY_ERROR_NOMEM;
    }
    if (err != GL_NO_ERROR) {
        error = "block_alloc: glTextureStorage2D failed: " + gl_error_name(err);
        return GPUPY_ERROR;
    }
    // texelFetch only: no filtering, and integer textures are incomplete
    // with the default (mipmapped, linear) filters.
    glTextureParameteri(tex, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTextureParameteri(tex, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    *out = tex;
    return GPUPY_OK;
}

void BlockTextures::free(gpupy_block* block) {
    if (!block || !live_.erase(block)) return;
    used_bytes_ -= block->bytes;
    if (block->bytes <= spare_limit()) {
        spares_.push_back(Spare{block->texture, texture_format(block->dtype).internal_format, block->width,
                                block->height, block->bytes});
        spare_bytes_ += block->bytes;
        trim_spares(spare_limit());
    } else {
        glDeleteTextures(1, &block->texture);
    }
    delete block;
}

void BlockTextures::trim_spares(int64_t bytes) {
    while (!spares_.empty() && (spare_bytes_ > bytes || spares_.size() > kMaxSpares)) {
        glDeleteTextures(1, &spares_.front().texture);
        spare_bytes_ -= spares_.front().bytes;
        spares_.pop_front();
    }
}

void BlockTextures::free_all() {
    for (gpupy_block* b : live_) {
        glDeleteTextures(1, &b->texture);
        delete b;
    }
    live_.clear();
    used_bytes_ = 0;
    trim_spares(0);
}

bool BlockTextures::check_range(const gpupy_block* block, int64_t offset, int64_t count,
                                std::string& error) const {
    if (!block || !owns(block)) {
        error = "not a live block of this driver";
        return false;
    }
    if (offset < 0 || count < 0 || offset + count > block->nelems) {
        error = "elements [" + std::to_string(offset) + ", " + std::to_string(offset + count) +
                ") outside a block of " + std::to_string(block->nelems);
        return false;
    }
    return true;
}

// Splits elements [offset, offset + count) of a row-major texture of width w
// into at most three rectangles: the tail of the first row, whole rows, the
// head of the last row. `fn(x, y, width, height, element_offset)`.
static void for_each_rect(int64_t w, int64_t offset, int64_t count,
                          const std::function<void(int, int, int, int, int64_t)>& fn) {
    int64_t end = offset + count, e = offset;
    if (e < end && e % w != 0) {
        int64_t n = std::min(end - e, w - e % w);
        fn(static_cast<int>(e % w), static_cast<int>(e / w), static_cast<int>(n), 1, e - offset);
        e += n;
    }
    if (end - e >= w) {
        int64_t rows = (end - e) / w;
        fn(0, static_cast<int>(e / w), static_cast<int>(w), static_cast<int>(rows), e - offset);
        e += rows * w;
    }
    if (e < end) fn(0, static_cast<int>(e / w), static_cast<int>(end - e), 1, e - offset);
}

int BlockTextures::read(gpupy_block* block, int64_t offset, int64_t count, void* dst,
                        std::string& error) {
    if (!check_range(block, offset, count, error)) {
        error = "block_read: " + error;
        return GPUPY_ERROR;
    }
    const TextureFormat& fmt = texture_format(block->dtype);
    const int itemsize = gpupy::dtype_itemsize(block->dtype);
    clear_gl_errors();
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    // Reads wait for every dispatch that wrote the block; eval_ir issues the
    // GL_TEXTURE_UPDATE_BARRIER_BIT these transfers need.
    for_each_rect(width_, offset, count, [&](int x, int y, int w, int h, int64_t at) {
        char* p = static_cast<char*>(dst) + at * itemsize;
        glGetTextureSubImage(block->texture, 0, x, y, 0, w, h, 1, fmt.upload_format, fmt.upload_type,
                             static_cast<GLsizei>(static_cast<int64_t>(w) * h * itemsize), p);
    });
    GLenum err = glGetError();
    if (err != GL_NO_ERROR) {
        error = "block_read: glGetTextureSubImage failed: " + gl_error_name(err);
        return GPUPY_ERROR;
    }
    return GPUPY_OK;
}

int BlockTextures::write(gpupy_block* block, int64_t offset, int64_t count, const void* src,
                         std::string& error) {
    if (!check_range(block, offset, count, error)) {
        error = "block_write: " + error;
        return GPUPY_ERROR;
    }
    const TextureFormat& fmt = texture_format(block->dtype);
    const int itemsize = gpupy::dtype_itemsize(block->dtype);
    clear_gl_errors();
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    for_each_rect(width_, offset, count, [&](int x, int y, int w, int h, int64_t at) {
        const char* p = static_cast<const char*>(src) + at * itemsize;
        glTextureSubImage2D(block->texture, 0, x, y, w, h, fmt.upload_format, fmt.upload_type, p);
    });
    GLenum err = glGetError();
    if (err != GL_NO_ERROR) {
        error = "block_write: glTextureSubImage2D failed: " + gl_error_name(err);
        return err == GL_OUT_OF_MEMORY ? GPUPY_ERROR_NOMEM : GPUPY_ERROR;
    }
    return GPUPY_OK;
}

}  // namespace gpupy_gl
