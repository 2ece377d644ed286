// Dims: the shapes, strides and coordinates of arrays, a vector of int64
// with room for a few inline. Every operation builds several (the result's
// shape, each operand's view, a node's shape), and as std::vector each was
// an allocation: a fifth of building a node went to malloc and free. Up to
// kInline values live in the object; more (NumPy allows 64 dimensions) go
// to the heap. The interface is the part of std::vector's the core uses,
// with the same meaning.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace gpupy {

class Dims {
public:
    using value_type = int64_t;
    using size_type = size_t;
    using difference_type = std::ptrdiff_t;
    using reference = int64_t&;
    using const_reference = const int64_t&;
    using pointer = int64_t*;
    using const_pointer = const int64_t*;
    using iterator = int64_t*;
    using const_iterator = const int64_t*;
    using reverse_iterator = std::reverse_iterator<iterator>;
    using const_reverse_iterator = std::reverse_iterator<const_iterator>;

    static constexpr size_t kInline = 6;

    Dims() = default;
    explicit Dims(size_t n, int64_t v = 0) { assign(n, v); }
    Dims(std::initializer_list<int64_t> values) { assign(values.begin(), values.end()); }
    template <class It, class = std::enable_if_t<!std::is_integral<It>::value>>
    Dims(It first, It last) {
        assign(first, last);
    }
    Dims(const std::vector<int64_t>& v) { assign(v.begin(), v.end()); }  // NOLINT: as the vector it replaces
    Dims(const Dims& o) { assign(o.begin(), o.end()); }
    Dims(Dims&& o) noexcept { take(o); }
    Dims& operator=(const Dims& o) {
        if (this != &o) assign(o.begin(), o.end());
        return *this;
    }
    Dims& operator=(Dims&& o) noexcept {
        if (this != &o) {
            release();
            take(o);
        }
        return *this;
    }
    Dims& operator=(std::initializer_list<int64_t> values) {
        assign(values.begin(), values.end());
        return *this;
    }
    ~Dims() { release(); }

    operator std::vector<int64_t>() const { return std::vector<int64_t>(begin(), end()); }  // NOLINT

    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    size_t capacity() const { return cap_; }
    int64_t* data() { return data_; }
    const int64_t* data() const { return data_; }
    int64_t& operator[](size_t i) { return data_[i]; }
    const int64_t& operator[](size_t i) const { return data_[i]; }
    int64_t& at(size_t i) {
        if (i >= size_) throw std::out_of_range("Dims::at");
        return data_[i];
    }
    const int64_t& at(size_t i) const {
        if (i >= size_) throw std::out_of_range("Dims::at");
        return data_[i];
    }
    int64_t& front() { return data_[0]; }
    const int64_t& front() const { return data_[0]; }
    int64_t& back() { return data_[size_ - 1]; }
    const int64_t& back() const { return data_[size_ - 1]; }
    iterator begin() { return data_; }
    iterator end() { return data_ + size_; }
    const_iterator begin() const { return data_; }
    const_iterator end() const { return data_ + size_; }
    const_iterator cbegin() const { return data_; }
    const_iterator cend() const { return data_ + size_; }
    reverse_iterator rbegin() { return reverse_iterator(end()); }
    reverse_iterator rend() { return reverse_iterator(begin()); }
    const_reverse_iterator rbegin() const { return const_reverse_iterator(end()); }
    const_reverse_iterator rend() const { return const_reverse_iterator(begin()); }

    void reserve(size_t n) {
        if (n <= cap_) return;
        int64_t* heap = new int64_t[n];
        if (size_) std::memcpy(heap, data_, size_ * sizeof(int64_t));
        release();
        data_ = heap;
        cap_ = static_cast<uint32_t>(n);
    }
    void clear() { size_ = 0; }
    void resize(size_t n, int64_t v = 0) {
        reserve(n);
        for (size_t i = size_; i < n; ++i) data_[i] = v;
        size_ = static_cast<uint32_t>(n);
    }
    void assign(size_t n, int64_t v) {
        size_ = 0;
        resize(n, v);
    }
    template <class It, class = std::enable_if_t<!std::is_integral<It>::value>>
    void assign(It first, It last) {
        const size_t n = static_cast<size_t>(std::distance(first, last));
        size_ = 0;
        reserve(n);
        std::copy(first, last, data_);
        size_ = static_cast<uint32_t>(n);
    }
    void push_back(int64_t v) {
        if (size_ == cap_) reserve(grown(size_ + 1));
        data_[size_++] = v;
    }
    int64_t& emplace_back(int64_t v) {
        push_back(v);
        return back();
    }
    void pop_back() { --size_; }

    iterator insert(const_iterator pos, int64_t v) { return insert(pos, size_t{1}, v); }
    iterator insert(const_iterator pos, size_t n, int64_t v) {
        const size_t at = make_room(pos, n);
        std::fill(data_ + at, data_ + at + n, v);
        return data_ + at;
    }
    template <class It, class = std::enable_if_t<!std::is_integral<It>::value>>
    iterator insert(const_iterator pos, It first, It last) {
        // (Copied first: the range may be this vector's own.)
        const Dims values(first, last);
        const size_t at = make_room(pos, values.size());
        std::copy(values.begin(), values.end(), data_ + at);
        return data_ + at;
    }
    iterator insert(const_iterator pos, std::initializer_list<int64_t> values) {
        return insert(pos, values.begin(), values.end());
    }
    iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
    iterator erase(const_iterator first, const_iterator last) {
        const size_t a = static_cast<size_t>(first - data_), b = static_cast<size_t>(last - data_);
        std::memmove(data_ + a, data_ + b, (size_ - b) * sizeof(int64_t));
        size_ -= static_cast<uint32_t>(b - a);
        return data_ + a;
    }
    void swap(Dims& o) noexcept {
        Dims t(std::move(o));
        o = std::move(*this);
        *this = std::move(t);
    }

    friend bool operator==(const Dims& a, const Dims& b) {
        return a.size_ == b.size_ && (a.size_ == 0 || std::memcmp(a.data_, b.data_, a.size_ * sizeof(int64_t)) == 0);
    }
    friend bool operator!=(const Dims& a, const Dims& b) { return !(a == b); }
    friend bool operator<(const Dims& a, const Dims& b) {
        return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
    }
    friend bool operator>(const Dims& a, const Dims& b) { return b < a; }
    friend bool operator<=(const Dims& a, const Dims& b) { return !(b < a); }
    friend bool operator>=(const Dims& a, const Dims& b) { return !(a < b); }

private:
    bool on_heap() const { return data_ != inline_; }
    static size_t grown(size_t need) { return std::max<size_t>(need, 2 * kInline); }
    void release() {
        if (on_heap()) delete[] data_;
        data_ = inline_;
        cap_ = kInline;
    }
    // Takes o's values; o is left empty.
    void take(Dims& o) {
        if (o.on_heap()) {
            data_ = o.data_;
            cap_ = o.cap_;
            o.data_ = o.inline_;
            o.cap_ = kInline;
        } else {
            data_ = inline_;
            cap_ = kInline;
            std::memcpy(inline_, o.inline_, o.size_ * sizeof(int64_t));
        }
        size_ = o.size_;
        o.size_ = 0;
    }
    // Opens n places at pos; returns its index.
    size_t make_room(const_iterator pos, size_t n) {
        const size_t at = static_cast<size_t>(pos - data_);
        if (size_ + n > cap_) reserve(std::max(grown(size_ + n), 2 * static_cast<size_t>(cap_)));
        std::memmove(data_ + at + n, data_ + at, (size_ - at) * sizeof(int64_t));
        size_ += static_cast<uint32_t>(n);
        return at;
    }

    int64_t* data_ = inline_;
    uint32_t size_ = 0, cap_ = kInline;
    int64_t inline_[kInline];
};

}  // namespace gpupy
