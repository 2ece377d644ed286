#include "worker_pool.hpp"

#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <thread>

namespace gpupy_sw {

namespace {

class WorkerPool {
public:
    // Runs parts 1..parts-1 on workers (started on first need, kept), part
    // 0 here.
    void run(int64_t parts, const std::function<void(int64_t)>& task) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            while (workers_ < parts - 1) {
                // Never joined: the pool lives as long as the process (the
                // driver library is never unloaded), and a worker waiting
                // for work does not keep the process from exiting.
                std::thread(&WorkerPool::work, this, ++workers_).detach();
            }
            task_ = &task;
            parts_ = parts;
            pending_ = parts - 1;
            ++generation_;
        }
        wake_.notify_all();
        task(0);
        std::unique_lock<std::mutex> lock(mutex_);
        done_.wait(lock, [&] { return pending_ == 0; });
        task_ = nullptr;
    }

private:
    void work(int64_t part) {
        uint64_t seen = 0;
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            wake_.wait(lock, [&] { return generation_ != seen; });
            seen = generation_;
            if (part >= parts_) continue;  // this call needs fewer workers
            const std::function<void(int64_t)>* task = task_;
            lock.unlock();
            (*task)(part);
            lock.lock();
            if (--pending_ == 0) done_.notify_one();
        }
    }

    std::mutex mutex_;
    std::condition_variable wake_, done_;
    int64_t workers_ = 0;  // started so far; worker k runs part k
    const std::function<void(int64_t)>* task_ = nullptr;
    int64_t parts_ = 0, pending_ = 0;
    uint64_t generation_ = 0;
};

std::mutex g_pool_mutex;  // held by the caller the pool serves
WorkerPool* g_pool = nullptr;
pid_t g_pool_pid = 0;

}  // namespace

void run_parallel(int64_t parts, const std::function<void(int64_t)>& task) {
    std::unique_lock<std::mutex> serving(g_pool_mutex, std::try_to_lock);
    if (parts <= 1 || !serving.owns_lock()) {
        for (int64_t p = 0; p < parts; ++p) task(p);
        return;
    }
    if (!g_pool || g_pool_pid != getpid()) {
        // First use, or a child after fork(): a new pool (a parent's pool
        // is left as it was: its mutexes may have been held at the fork).
        g_pool = new WorkerPool();  // leaked: lives as long as the process
        g_pool_pid = getpid();
    }
    g_pool->run(parts, task);
}

}  // namespace gpupy_sw
