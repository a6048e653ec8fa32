#include "common/rollout_store.h"

#include <hdf5.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "common/error.h"

namespace graphworld {
namespace {

constexpr size_t kGraphNameBytes = 1024;  // fixed-length strings: SWMR files take no variable-length data

// The innermost message on HDF5's error stack, which names the cause
// ("file is already open for write", "unable to open file").
std::string hdf5_error_text() {
  std::string text;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_UPWARD,
      [](unsigned n, const H5E_error2_t* e, void* out) -> herr_t {
        if (n == 0 && e->desc) *static_cast<std::string*>(out) = e->desc;
        return 0;
      },
      &text);
  H5Eclear2(H5E_DEFAULT);
  return text.empty() ? "no detail from HDF5" : text;
}

// HDF5 prints its error stack to stderr by default; errors are reported by
// the exceptions below instead.
void silence_hdf5() {
  static const bool done = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)done;
}

template <typename E = Error>
hid_t checked(hid_t id, const std::string& what) {
  if (id < 0) throw E(what + ": " + hdf5_error_text());
  return id;
}

// An HDF5 identifier closed with the matching H5?close.
class Handle {
 public:
  Handle() = default;
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  Handle(Handle&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
  Handle& operator=(Handle&& o) noexcept {
    reset();
    id_ = o.id_;
    close_ = o.close_;
    o.id_ = -1;
    return *this;
  }
  ~Handle() { reset(); }
  void reset() {
    if (id_ >= 0 && close_) close_(id_);
    id_ = -1;
  }
  hid_t get() const { return id_; }

 private:
  hid_t id_ = -1;
  herr_t (*close_)(hid_t) = nullptr;
};

// One column of StoredStep: its dataset name, HDF5 type and the copies
// between rows of steps and a contiguous buffer.
struct Column {
  const char* name;
  hid_t (*type)();
  size_t bytes;
  void (*gather)(std::span<const StoredStep>, void*);
  void (*scatter)(const void*, std::span<StoredStep>);
};

#define GRAPHWORLD_STEP_COLUMN(field, h5type)                                            \
  Column {                                                                               \
    #field, [] { return static_cast<hid_t>(h5type); }, sizeof(StoredStep::field),        \
        [](std::span<const StoredStep> steps, void* out) {                               \
          auto* o = static_cast<decltype(StoredStep::field)*>(out);                      \
          for (size_t i = 0; i < steps.size(); ++i) o[i] = steps[i].field;               \
        },                                                                               \
        [](const void* in, std::span<StoredStep> steps) {                                \
          const auto* p = static_cast<const decltype(StoredStep::field)*>(in);           \
          for (size_t i = 0; i < steps.size(); ++i) steps[i].field = p[i];               \
        }                                                                                \
  }

const std::vector<Column>& columns() {
  static const std::vector<Column> all = {
      GRAPHWORLD_STEP_COLUMN(actor_id, H5T_NATIVE_UINT32),     GRAPHWORLD_STEP_COLUMN(env_slot, H5T_NATIVE_INT32),
      GRAPHWORLD_STEP_COLUMN(policy_version, H5T_NATIVE_INT64), GRAPHWORLD_STEP_COLUMN(graph_index, H5T_NATIVE_INT32),
      GRAPHWORLD_STEP_COLUMN(episode_seed, H5T_NATIVE_UINT64),  GRAPHWORLD_STEP_COLUMN(episode_step, H5T_NATIVE_INT32),
      GRAPHWORLD_STEP_COLUMN(xfer, H5T_NATIVE_INT32),           GRAPHWORLD_STEP_COLUMN(location, H5T_NATIVE_INT32),
      GRAPHWORLD_STEP_COLUMN(reward, H5T_NATIVE_FLOAT),         GRAPHWORLD_STEP_COLUMN(done, H5T_NATIVE_UINT8),
      GRAPHWORLD_STEP_COLUMN(cost_ms, H5T_NATIVE_DOUBLE),       GRAPHWORLD_STEP_COLUMN(log_prob, H5T_NATIVE_FLOAT),
      GRAPHWORLD_STEP_COLUMN(value, H5T_NATIVE_FLOAT),
  };
  return all;
}
#undef GRAPHWORLD_STEP_COLUMN

// The count of steps whose every column is flushed: appended to
// /flushed_steps after the data, so a reader (or a resume after a crash)
// never counts rows that are not all there.
constexpr const char* kFlushedSteps = "flushed_steps";

Handle file_access_latest() {
  Handle fapl(checked(H5Pcreate(H5P_FILE_ACCESS), "HDF5 property list"), H5Pclose);
  // SWMR needs the 1.10 file format.
  if (H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_LATEST, H5F_LIBVER_LATEST) < 0)
    throw Error("HDF5: cannot select the latest file format: " + hdf5_error_text());
  return fapl;
}

Handle create_extendable(hid_t file, const std::string& name, hid_t type, int64_t chunk) {
  const hsize_t zero = 0, unlimited = H5S_UNLIMITED, chunk_rows = static_cast<hsize_t>(chunk);
  Handle space(checked(H5Screate_simple(1, &zero, &unlimited), "HDF5 dataspace"), H5Sclose);
  Handle dcpl(checked(H5Pcreate(H5P_DATASET_CREATE), "HDF5 property list"), H5Pclose);
  H5Pset_chunk(dcpl.get(), 1, &chunk_rows);
  // A checksum per chunk: damaged rows are refused on reading (a read
  // fails naming the column) instead of reaching a world model as data.
  checked(H5Pset_fletcher32(dcpl.get()), "HDF5 checksum filter");
  return Handle(checked(H5Dcreate2(file, name.c_str(), type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                        "creating dataset " + name),
                H5Dclose);
}

hsize_t extent_of(hid_t dataset) {
  Handle space(checked(H5Dget_space(dataset), "HDF5 dataspace"), H5Sclose);
  hsize_t n = 0;
  H5Sget_simple_extent_dims(space.get(), &n, nullptr);
  return n;
}

void write_rows(hid_t dataset, hid_t type, hsize_t at, hsize_t count, const void* data, const std::string& what) {
  const hsize_t extent = at + count;
  if (H5Dset_extent(dataset, &extent) < 0) throw Error(what + ": cannot extend: " + hdf5_error_text());
  if (count == 0) return;
  Handle file_space(checked(H5Dget_space(dataset), what), H5Sclose);
  H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, &at, nullptr, &count, nullptr);
  Handle memory_space(checked(H5Screate_simple(1, &count, nullptr), what), H5Sclose);
  if (H5Dwrite(dataset, type, memory_space.get(), file_space.get(), H5P_DEFAULT, data) < 0)
    throw Error(what + ": write failed: " + hdf5_error_text());
}

void read_rows(hid_t dataset, hid_t type, hsize_t at, hsize_t count, void* data, const std::string& what) {
  if (count == 0) return;
  Handle file_space(checked<FormatError>(H5Dget_space(dataset), what), H5Sclose);
  H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, &at, nullptr, &count, nullptr);
  Handle memory_space(checked<FormatError>(H5Screate_simple(1, &count, nullptr), what), H5Sclose);
  if (H5Dread(dataset, type, memory_space.get(), file_space.get(), H5P_DEFAULT, data) < 0)
    throw FormatError(what + ": read failed: " + hdf5_error_text());
}

void write_attribute(hid_t file, const char* name, hid_t type, const void* value) {
  Handle space(checked(H5Screate(H5S_SCALAR), "HDF5 dataspace"), H5Sclose);
  Handle attribute(checked(H5Acreate2(file, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT), name), H5Aclose);
  if (H5Awrite(attribute.get(), type, value) < 0) throw Error(std::string("writing attribute ") + name);
}

template <typename T>
T read_attribute(hid_t file, const char* name, hid_t type, const std::string& path) {
  if (H5Aexists(file, name) <= 0) throw FormatError(path + ": not a graphworld rollout store (no '" + name + "' attribute)");
  Handle attribute(checked<FormatError>(H5Aopen(file, name, H5P_DEFAULT), path), H5Aclose);
  T value{};
  if (H5Aread(attribute.get(), type, &value) < 0) throw FormatError(path + ": unreadable attribute " + name);
  return value;
}

Handle fixed_string_type(size_t bytes) {
  Handle type(checked(H5Tcopy(H5T_C_S1), "HDF5 string type"), H5Tclose);
  H5Tset_size(type.get(), bytes);
  H5Tset_strpad(type.get(), H5T_STR_NULLPAD);
  return type;
}

void write_bytes_dataset(hid_t file, const char* name, hid_t type, size_t count, const void* data) {
  const hsize_t n = count;
  Handle space(checked(H5Screate_simple(1, &n, nullptr), "HDF5 dataspace"), H5Sclose);
  Handle dataset(checked(H5Dcreate2(file, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), name),
                 H5Dclose);
  if (count > 0 && H5Dwrite(dataset.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    throw Error(std::string("writing ") + name + ": " + hdf5_error_text());
}

// Everything a reader or a resuming writer needs from the file's fixed part.
RolloutStoreInfo read_info(hid_t file, const std::string& path) {
  const auto version = read_attribute<uint32_t>(file, "format_version", H5T_NATIVE_UINT32, path);
  if (version != kRolloutStoreFormatVersion)
    throw FormatError(path + ": rollout store format " + std::to_string(version) + ", this build reads " +
                      std::to_string(kRolloutStoreFormatVersion));
  RolloutStoreInfo info;
  info.num_xfers = read_attribute<int32_t>(file, "num_xfers", H5T_NATIVE_INT32, path);
  {
    Handle dataset(checked<FormatError>(H5Dopen2(file, "run_id", H5P_DEFAULT), path + ": no run_id"), H5Dclose);
    info.run_id.resize(extent_of(dataset.get()));
    read_rows(dataset.get(), H5T_NATIVE_CHAR, 0, info.run_id.size(), info.run_id.data(), path + ": run_id");
  }
  {
    Handle dataset(checked<FormatError>(H5Dopen2(file, "config", H5P_DEFAULT), path + ": no config"), H5Dclose);
    info.config_text.resize(extent_of(dataset.get()));
    read_rows(dataset.get(), H5T_NATIVE_CHAR, 0, info.config_text.size(), info.config_text.data(), path + ": config");
  }
  {
    Handle dataset(checked<FormatError>(H5Dopen2(file, "graphs", H5P_DEFAULT), path + ": no graphs"), H5Dclose);
    const hsize_t n = extent_of(dataset.get());
    std::vector<char> names(n * kGraphNameBytes);
    const Handle type = fixed_string_type(kGraphNameBytes);
    read_rows(dataset.get(), type.get(), 0, n, names.data(), path + ": graphs");
    for (hsize_t g = 0; g < n; ++g) {
      const char* name = names.data() + g * kGraphNameBytes;
      info.graphs.emplace_back(name, strnlen(name, kGraphNameBytes));
    }
  }
  return info;
}

struct Datasets {
  std::vector<Handle> by_column;  // in the order of columns()
  Handle flushed;

  void open(hid_t file, const std::string& path) {
    by_column.clear();
    for (const Column& c : columns())
      by_column.emplace_back(checked<FormatError>(H5Dopen2(file, (std::string("steps/") + c.name).c_str(), H5P_DEFAULT),
                                                path + ": no steps/" + c.name + " column"),
                           H5Dclose);
    flushed = Handle(checked<FormatError>(H5Dopen2(file, kFlushedSteps, H5P_DEFAULT), path + ": no flushed_steps"),
                     H5Dclose);
  }
  // The steps every column holds for sure: the largest count in
  // /flushed_steps that no column falls short of. The counts only grow, but
  // after a crash the newest row may be unwritten (HDF5's fill value 0) or
  // ahead of a column, so the last few rows are read and checked.
  int64_t flushed_steps(const std::string& path) const {
    hsize_t shortest = extent_of(by_column.front().get());
    for (const Handle& d : by_column) shortest = std::min(shortest, extent_of(d.get()));
    const hsize_t n = extent_of(flushed.get());
    const hsize_t take = std::min<hsize_t>(n, 64);
    std::vector<int64_t> values(take);
    read_rows(flushed.get(), H5T_NATIVE_INT64, n - take, take, values.data(), path + ": flushed_steps");
    int64_t best = 0;
    for (int64_t v : values)
      if (v > best && static_cast<hsize_t>(v) <= shortest) best = v;
    return best;
  }
};

}  // namespace

struct RolloutStoreWriter::Impl {
  std::string path;
  RolloutStoreInfo info;
  RolloutStoreOptions options;
  Handle file;
  Datasets datasets;
  int64_t steps = 0;          // appended
  int64_t flushed = 0;        // in /flushed_steps
  hsize_t flush_records = 0;  // rows of /flushed_steps
  std::chrono::steady_clock::time_point last_flush = std::chrono::steady_clock::now();
  std::vector<char> buffer;
};

RolloutStoreWriter::RolloutStoreWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

std::unique_ptr<RolloutStoreWriter> RolloutStoreWriter::create(const std::string& path, const RolloutStoreInfo& info,
                                                               RolloutStoreOptions options) {
  silence_hdf5();
  if (std::filesystem::exists(path))
    throw Error(path + ": a rollout store is there already; a new run writes a new file (resume appends to it)");
  if (options.chunk_steps < 1) throw UsageError("rollout store chunk_steps must be at least 1");
  for (const std::string& g : info.graphs)
    if (g.size() >= kGraphNameBytes)
      throw UsageError("training graph name longer than " + std::to_string(kGraphNameBytes - 1) + " bytes: " + g);
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->info = info;
  impl->options = options;
  const Handle fapl = file_access_latest();
  impl->file = Handle(checked(H5Fcreate(path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl.get()), "creating " + path),
                      H5Fclose);
  const hid_t file = impl->file.get();
  const uint32_t version = kRolloutStoreFormatVersion;
  write_attribute(file, "format_version", H5T_NATIVE_UINT32, &version);
  write_attribute(file, "num_xfers", H5T_NATIVE_INT32, &info.num_xfers);
  write_bytes_dataset(file, "run_id", H5T_NATIVE_CHAR, info.run_id.size(), info.run_id.data());
  write_bytes_dataset(file, "config", H5T_NATIVE_CHAR, info.config_text.size(), info.config_text.data());
  {
    std::vector<char> names(info.graphs.size() * kGraphNameBytes, '\0');
    for (size_t g = 0; g < info.graphs.size(); ++g)
      std::copy(info.graphs[g].begin(), info.graphs[g].end(), names.begin() + static_cast<ptrdiff_t>(g * kGraphNameBytes));
    const Handle type = fixed_string_type(kGraphNameBytes);
    write_bytes_dataset(file, "graphs", type.get(), info.graphs.size(), names.data());
  }
  Handle group(checked(H5Gcreate2(file, "steps", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "creating /steps"), H5Gclose);
  for (const Column& c : columns()) create_extendable(file, std::string("steps/") + c.name, c.type(), options.chunk_steps);
  create_extendable(file, kFlushedSteps, H5T_NATIVE_INT64, 1024);
  impl->datasets.open(file, path);
  if (H5Fstart_swmr_write(file) < 0) throw Error(path + ": cannot start SWMR writing: " + hdf5_error_text());
  return std::unique_ptr<RolloutStoreWriter>(new RolloutStoreWriter(std::move(impl)));
}

std::unique_ptr<RolloutStoreWriter> RolloutStoreWriter::resume(const std::string& path, const std::string& run_id,
                                                               RolloutStoreOptions options) {
  silence_hdf5();
  if (!std::filesystem::exists(path)) throw Error(path + ": no rollout store to resume");
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->options = options;
  {
    // A writer that died leaves the file marked open for writing; clear the
    // mark as `h5clear -s` does, through the same file-access property.
    const Handle fapl = file_access_latest();
    hbool_t clear = true;
    const char* kClear = "clear_status_flags";
    if (H5Pexist(fapl.get(), kClear) > 0 ? H5Pset(fapl.get(), kClear, &clear) < 0
                                         : H5Pinsert2(fapl.get(), kClear, sizeof(hbool_t), &clear, nullptr, nullptr,
                                                      nullptr, nullptr, nullptr, nullptr) < 0)
      throw Error(path + ": cannot ask HDF5 to clear the file's open mark: " + hdf5_error_text());
    impl->file = Handle(checked<FormatError>(H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl.get()), path + ": cannot open"),
                        H5Fclose);
  }
  const hid_t file = impl->file.get();
  impl->info = read_info(file, path);
  if (impl->info.run_id != run_id)
    throw FormatError(path + ": the store belongs to run '" + impl->info.run_id + "', not '" + run_id + "'");
  impl->datasets.open(file, path);
  // Rows past the last flushed count were cut short by the crash: drop them
  // (before SWMR starts, which does not allow shrinking).
  impl->flushed = impl->steps = impl->datasets.flushed_steps(path);
  const auto keep = static_cast<hsize_t>(impl->steps);
  for (const Handle& d : impl->datasets.by_column)
    if (H5Dset_extent(d.get(), &keep) < 0) throw FormatError(path + ": cannot trim the unflushed tail: " + hdf5_error_text());
  impl->flush_records = extent_of(impl->datasets.flushed.get());
  if (H5Fstart_swmr_write(file) < 0) throw Error(path + ": cannot start SWMR writing: " + hdf5_error_text());
  return std::unique_ptr<RolloutStoreWriter>(new RolloutStoreWriter(std::move(impl)));
}

RolloutStoreWriter::~RolloutStoreWriter() {
  try {
    close();
  } catch (const std::exception& e) {
    std::cerr << "rollout store " << impl_->path << ": closing failed: " << e.what() << "\n";
  }
}

void RolloutStoreWriter::append(std::span<const StoredStep> steps) {
  if (impl_->file.get() < 0) throw UsageError(impl_->path + ": the rollout store is closed");
  const auto& cols = columns();
  for (size_t c = 0; c < cols.size(); ++c) {
    impl_->buffer.resize(steps.size() * cols[c].bytes);
    cols[c].gather(steps, impl_->buffer.data());
    write_rows(impl_->datasets.by_column[c].get(), cols[c].type(), static_cast<hsize_t>(impl_->steps), steps.size(),
               impl_->buffer.data(), impl_->path + ": steps/" + cols[c].name);
  }
  impl_->steps += static_cast<int64_t>(steps.size());
  const double since = std::chrono::duration<double>(std::chrono::steady_clock::now() - impl_->last_flush).count();
  if (since >= impl_->options.flush_every_s) flush();
}

void RolloutStoreWriter::flush() {
  Impl& s = *impl_;
  if (s.file.get() < 0) return;
  if (H5Fflush(s.file.get(), H5F_SCOPE_LOCAL) < 0) throw Error(s.path + ": flush failed: " + hdf5_error_text());
  if (s.steps != s.flushed) {
    write_rows(s.datasets.flushed.get(), H5T_NATIVE_INT64, s.flush_records, 1, &s.steps, s.path + ": flushed_steps");
    ++s.flush_records;
    s.flushed = s.steps;
    if (H5Fflush(s.file.get(), H5F_SCOPE_LOCAL) < 0) throw Error(s.path + ": flush failed: " + hdf5_error_text());
  }
  s.last_flush = std::chrono::steady_clock::now();
}

void RolloutStoreWriter::close() {
  if (impl_->file.get() < 0) return;
  flush();
  impl_->datasets = Datasets();
  impl_->file.reset();
}

int64_t RolloutStoreWriter::steps() const { return impl_->steps; }
const RolloutStoreInfo& RolloutStoreWriter::info() const { return impl_->info; }
const std::string& RolloutStoreWriter::path() const { return impl_->path; }

struct RolloutStoreReader::Impl {
  std::string path;
  RolloutStoreInfo info;
  Handle file;
  Datasets datasets;
  int64_t steps = 0;
};

RolloutStoreReader::RolloutStoreReader(const std::string& path) : impl_(std::make_unique<Impl>()) {
  silence_hdf5();
  impl_->path = path;
  if (!std::filesystem::exists(path)) throw FormatError(path + ": no such rollout store");
  const Handle fapl = file_access_latest();
  impl_->file = Handle(checked<FormatError>(H5Fopen(path.c_str(), H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, fapl.get()),
                                            path + ": not a readable HDF5 file"),
                       H5Fclose);
  impl_->info = read_info(impl_->file.get(), path);
  impl_->datasets.open(impl_->file.get(), path);
  refresh();
}

RolloutStoreReader::~RolloutStoreReader() = default;

void RolloutStoreReader::refresh() {
  Impl& s = *impl_;
  if (H5Drefresh(s.datasets.flushed.get()) < 0) throw FormatError(s.path + ": refresh failed: " + hdf5_error_text());
  for (const Handle& d : s.datasets.by_column)
    if (H5Drefresh(d.get()) < 0) throw FormatError(s.path + ": refresh failed: " + hdf5_error_text());
  // Never backwards: a refresh that catches the writer mid-flush may see
  // less than the last one did.
  s.steps = std::max(s.steps, s.datasets.flushed_steps(s.path));
}

int64_t RolloutStoreReader::steps() const { return impl_->steps; }
const RolloutStoreInfo& RolloutStoreReader::info() const { return impl_->info; }

std::vector<StoredStep> RolloutStoreReader::read(int64_t begin, int64_t count) const {
  if (begin < 0 || count < 0 || begin + count > impl_->steps)
    throw UsageError(impl_->path + ": steps [" + std::to_string(begin) + ", " + std::to_string(begin + count) +
                     ") are not all in the store (" + std::to_string(impl_->steps) + " visible)");
  std::vector<StoredStep> out(static_cast<size_t>(count));
  std::vector<char> buffer;
  const auto& cols = columns();
  for (size_t c = 0; c < cols.size(); ++c) {
    buffer.resize(out.size() * cols[c].bytes);
    read_rows(impl_->datasets.by_column[c].get(), cols[c].type(), static_cast<hsize_t>(begin), out.size(), buffer.data(),
              impl_->path + ": steps/" + cols[c].name);
    cols[c].scatter(buffer.data(), out);
  }
  return out;
}

}  // namespace graphworld
