#include "ui/volume/volume_worker.h"

#include <QPointer>
#include <QtConcurrent/QtConcurrentRun>
#include <chrono>
#include <cmath>

#include "compute/pipeline.h"
#include "compute/volume_render.h"
#include "ui/frame/thread_priority.h"

namespace stacklens::ui {
namespace {

double millisecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

VolumeWorker::VolumeWorker(Callbacks callbacks, QObject* parent)
    : QObject(parent), callbacks_(std::move(callbacks)) {
  pool_.setMaxThreadCount(1);
}

VolumeWorker::~VolumeWorker() {
  if (cancel_) cancel_->store(true);
  pool_.waitForDone();
}

void VolumeWorker::run(std::function<void(const std::function<void(std::function<void()>)>&)> job) {
  QPointer<VolumeWorker> self(this);
  (void)QtConcurrent::run(&pool_, [self, job = std::move(job)] {
    static thread_local const bool lowered = (lowerThreadPriority(), true);
    (void)lowered;
    const auto post = [self](std::function<void()> f) {
      QMetaObject::invokeMethod(
          self.data(),
          [self, f = std::move(f)] {
            if (self) f();
          },
          Qt::QueuedConnection);
    };
    job(post);
  });
}

void VolumeWorker::cancelLoad() {
  if (cancel_) cancel_->store(true);
}

void VolumeWorker::load(VolumeRequest request, bool gpu) {
  cancelLoad();
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  loading_ = true;
  const int generation = ++generation_;
  pending_.reset();
  auto cancel = cancel_;
  auto backend = backend_;
  run([this, request, gpu, cancel, backend, generation](const auto& post) mutable {
    QString gpuNote;
    try {
      if (gpu && !backend) {
        std::string why;
        if (compute::cudaUsable(&why))
          backend = compute::makeCudaBackend();
        else
          gpuNote = QString::fromStdString("no CUDA device: " + why);
      }
      if (backend) backend->device().bindToThisThread();
      auto cpu = backend ? nullptr : compute::makeCpuBackend();
      auto volume = std::make_shared<LoadedVolume>(
          loadVolume(request, backend ? *backend : *cpu, cancel.get(),
                     [post, this](double f) { post([this, f] { callbacks_.progress(f); }); }));
      post([this, volume, backend, gpuNote, generation] {
        if (generation != generation_) return;
        loading_ = false;
        backend_ = backend;
        volume_ = volume;
        callbacks_.loaded(volume, gpuNote);
      });
    } catch (const compute::Cancelled&) {
      post([this, generation] {
        if (generation == generation_) loading_ = false;
      });
    } catch (const std::exception& e) {
      const QString why = QString::fromUtf8(e.what());
      post([this, why, generation] {
        if (generation != generation_) return;
        loading_ = false;
        callbacks_.failed(why);
      });
    }
  });
}

void VolumeWorker::render(const compute::VolumeRenderParams& p, bool download) {
  if (!backend_ || !volume_) return;
  pending_ = p;
  download_ = download;
  if (!rendering_) startRender();
}

void VolumeWorker::startRender() {
  if (!pending_) return;
  const compute::VolumeRenderParams p = *pending_;
  pending_.reset();
  rendering_ = true;
  const bool download = download_;
  const int generation = generation_;
  auto backend = backend_;
  auto volume = volume_;
  run([this, p, download, generation, backend, volume](const auto& post) {
    try {
      backend->device().bindToThisThread();
      const auto t = std::chrono::steady_clock::now();
      compute::Image frame = backend->renderVolume(volume->volume, p);
      if (download) frame = backend->download(frame);
      backend->synchronize();
      const double ms = millisecondsSince(t);
      post([this, frame, ms, p, generation] {
        rendering_ = false;
        if (generation == generation_) callbacks_.rendered(frame, ms, p);
        startRender();
      });
    } catch (const std::exception& e) {
      const QString why = QString::fromUtf8(e.what());
      post([this, why] {
        rendering_ = false;
        callbacks_.failed(why);
      });
    }
  });
}

void VolumeWorker::compare(const compute::VolumeRenderParams& p) {
  if (!volume_) return;
  auto backend = backend_;
  auto volume = volume_;
  run([this, p, backend, volume](const auto& post) {
    try {
      TimingRow row;
      row.stage = QString("3D view %1 %2×%3")
                      .arg(compute::volumeModeName(p.mode))
                      .arg(p.width)
                      .arg(p.height);
      auto cpu = compute::makeCpuBackend();
      row.cpuThreads = cpu->threads();
      auto t = std::chrono::steady_clock::now();
      const compute::Image onCpu = cpu->renderVolume(volume->volume, p);
      row.cpuMs = millisecondsSince(t);
      if (backend) {
        backend->device().bindToThisThread();
        backend->renderVolume(volume->volume, p);  // the texture is made outside the timing
        backend->synchronize();
        t = std::chrono::steady_clock::now();
        compute::Image onGpu = backend->renderVolume(volume->volume, p);
        backend->synchronize();
        row.gpuKernelMs = millisecondsSince(t);
        onGpu = backend->download(onGpu);
        row.gpuTotalMs = millisecondsSince(t);
        row.speedupKernel = row.cpuMs / row.gpuKernelMs;
        row.speedupTotal = row.cpuMs / row.gpuTotalMs;
        const compute::StageDifference d = compute::overlapDifference(onGpu, onCpu);
        row.maxAbs = d.maxAbs, row.relL2 = d.relL2;
      }
      post([this, row] { callbacks_.compared(row); });
    } catch (const std::exception& e) {
      const QString why = QString::fromUtf8(e.what());
      post([this, why] { callbacks_.failed(why); });
    }
  });
}

}  // namespace stacklens::ui
