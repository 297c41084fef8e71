// FITS table catalogs (ASCII and binary tables) through cfitsio: every column as text cells,
// variable-length arrays and bit columns included, within the row limit of the file's size.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "io/catalog_readers.h"
#include "io/catalog_rows.h"
#include "io/fits_support.h"
#include "io/fits_table_file.h"

namespace stacklens::io {

namespace {

std::string fitsKeyString(fitsfile* f, const std::string& key) {
  char value[FLEN_VALUE] = {};
  int status = 0;
  if (fits_read_key(f, TSTRING, key.c_str(), value, nullptr, &status) != 0) return "";
  return trimmed(value);
}

template <typename T>
void readNumbers(fitsfile* f, int type, int col, long rows, long repeat,
                 std::vector<std::vector<std::string>>& cells, size_t c, FitsStatus& st) {
  std::vector<T> values(static_cast<size_t>(rows * repeat));
  std::vector<char> nulls(values.size(), 0);
  int anynul = 0;
  if (!values.empty())
    fits_read_colnull(f, type, col, 1, 1, rows * repeat, values.data(), nulls.data(), &anynul,
                      st.ptr());
  st.check("reading column " + std::to_string(col));
  for (long r = 0; r < rows; ++r) {
    std::string joined;
    bool allNull = true;
    for (long k = 0; k < repeat; ++k) {
      const size_t i = static_cast<size_t>(r * repeat + k);
      std::string v = nulls[i] ? std::string() : formatValue(values[i]);
      if (!v.empty()) allNull = false;
      joined += (k ? " " : "") + v;
    }
    cells[static_cast<size_t>(r)][c] = allNull ? std::string() : joined;
  }
}

// The current table HDU's rows must lie within the file (for a .gz file, within what was
// inflated) and its cells within the allocation cap, before anything is allocated for them.
// Returns the file's size in bytes.
uint64_t checkTableFits(fitsfile* f, const std::string& path, long nrows, int ncols) {
  FitsStatus st(path);
  LONGLONG headStart = 0, dataStart = 0, dataEnd = 0, rowBytes = 0;
  fits_get_hduaddrll(f, &headStart, &dataStart, &dataEnd, st.ptr());
  fits_read_key(f, TLONGLONG, "NAXIS1", &rowBytes, nullptr, st.ptr());
  st.check("reading the table size");
  const LONGLONG fileBytes = f->Fptr->logfilesize;
  if (nrows < 0 || ncols < 0 || rowBytes < 0 || dataStart > fileBytes)
    throw IoError(path, "the table's size is damaged");
  const uint64_t rows = static_cast<uint64_t>(nrows), width = static_cast<uint64_t>(rowBytes);
  const uint64_t room = static_cast<uint64_t>(fileBytes - dataStart);
  if (width != 0 && rows > room / width)
    throw IoError(path, "the table claims " + std::to_string(rows) + " rows of " +
                            std::to_string(width) + " bytes, more than the " +
                            std::to_string(room) + " bytes after its header");
  RowLimit(static_cast<uint64_t>(ncols), static_cast<uint64_t>(fileBytes), path).check(rows);
  return static_cast<uint64_t>(fileBytes);
}

// The file's table HDUs (1-based HDU numbers) and the one to read.
struct TableChoice {
  std::vector<int> tables;
  int pick = -1;
};

// Walks every HDU: options.table picks by index among the tables, else the first with rows
// (the first table when none has rows).
TableChoice chooseTable(fitsfile* f, const FitsTableFile& file, const std::string& path,
                        const CatalogReadOptions& options, FitsStatus& st) {
  int hdus = 0;
  fits_get_num_hdus(f, &hdus, st.ptr());
  st.check("counting HDUs");
  std::vector<int> tables;
  int pick = -1;
  for (int h = 1; h <= hdus; ++h) {
    int type = 0;
    fits_movabs_hdu(f, h, &type, st.ptr());
    st.check("moving to HDU " + std::to_string(h));
    if (type != BINARY_TBL && type != ASCII_TBL) continue;
    long rows = 0;
    fits_get_num_rows(f, &rows, st.ptr());
    st.check("reading NAXIS2");
    tables.push_back(h);
    if (options.table < 0 && pick < 0 && rows > 0) pick = h;
    if (options.table >= 0 && static_cast<int>(tables.size()) == options.table + 1) pick = h;
  }
  if (tables.empty()) {
    // The HDUs our header pass rejected may be why none was read.
    std::string why;
    for (const std::string& r : file.rejected()) why += (why.empty() ? " (" : "; ") + r;
    throw IoError(path,
                  "the FITS file holds no readable table HDU" + why + (why.empty() ? "" : ")"));
  }
  if (options.table >= static_cast<int>(tables.size()))
    throw IoError(path, "the FITS file has " + std::to_string(tables.size()) + " tables, not " +
                            std::to_string(options.table + 1));
  if (pick < 0) pick = tables[0];
  return {std::move(tables), pick};
}

// The table's name (EXTNAME, else the file's) and, in a file of several, which one it is.
void nameTable(fitsfile* f, const std::string& path, const TableChoice& choice,
               const CatalogReadOptions& options, CatalogTable& t) {
  const std::vector<int>& tables = choice.tables;
  const int pick = choice.pick;
  t.name = fitsKeyString(f, "EXTNAME");
  if (t.name.empty()) t.name = std::filesystem::path(path).filename().string();
  const size_t index =
      static_cast<size_t>(std::find(tables.begin(), tables.end(), pick) - tables.begin());
  if (tables.size() > 1)
    t.note = "table " + std::to_string(index + 1) + " of " + std::to_string(tables.size()) +
             " (HDU " + std::to_string(pick - 1) + ")" +
             (options.table < 0 ? ": the first with rows" : "");
}

// Column col's name (TTYPEn, else "coln"), unit, UCD and TFORM; returns the name.
std::string readColumnKeys(fitsfile* f, int col, CatalogTable& t) {
  const std::string n = std::to_string(col);
  std::string name = fitsKeyString(f, "TTYPE" + n);
  if (name.empty()) name = "col" + n;
  t.columns.push_back(name);
  t.units.push_back(fitsKeyString(f, "TUNIT" + n));
  t.ucds.push_back(fitsKeyString(f, "TUCD" + n));
  t.datatypes.push_back(fitsKeyString(f, "TFORM" + n));
  return name;
}

// One column of variable-length arrays of type base, row by row (each row has its own length).
void readVariableLengthColumn(fitsfile* f, int col, int base, long nrows, uint64_t fileBytes,
                              const std::string& path, std::vector<std::vector<std::string>>& cells,
                              size_t c, FitsStatus& st) {
  const std::string n = std::to_string(col);
  for (long r = 0; r < nrows; ++r) {
    long length = 0, offset = 0;
    fits_read_descript(f, col, r + 1, &length, &offset, st.ptr());
    st.check("reading column " + n);
    // Each element takes at least a byte of the heap (bit arrays are not read).
    if (length < 0 || static_cast<uint64_t>(length) > fileBytes)
      throw IoError(path, "column " + n + ", row " + std::to_string(r + 1) + " claims " +
                              std::to_string(length) + " elements, more than the file holds");
    std::string& cell = cells[static_cast<size_t>(r)][c];
    if (base == TSTRING) {
      std::vector<char> text(static_cast<size_t>(length) + 1, 0);
      char* ptrs[1] = {text.data()};
      int anynul = 0;
      fits_read_col_str(f, col, r + 1, 1, 1, const_cast<char*>(""), ptrs, &anynul, st.ptr());
      st.check("reading column " + n);
      cell = stripPadding(text.data());
    } else if (base != TBIT && base != TCOMPLEX && base != TDBLCOMPLEX && length > 0) {
      std::vector<double> values(static_cast<size_t>(length));
      std::vector<char> nulls(values.size(), 0);
      int anynul = 0;
      fits_read_colnull(f, TDOUBLE, col, r + 1, 1, length, values.data(), nulls.data(), &anynul,
                        st.ptr());
      st.check("reading column " + n);
      for (size_t k = 0; k < values.size(); ++k)
        cell += (k ? " " : "") + (nulls[k] ? std::string() : formatValue(values[k]));
    }
  }
}

void readStringColumn(fitsfile* f, int col, long nrows, long width,
                      std::vector<std::vector<std::string>>& cells, size_t c, FitsStatus& st) {
  std::vector<std::vector<char>> buffers(static_cast<size_t>(nrows),
                                         std::vector<char>(static_cast<size_t>(width) + 1));
  std::vector<char*> ptrs;
  for (auto& b : buffers) ptrs.push_back(b.data());
  int anynul = 0;
  fits_read_col_str(f, col, 1, 1, nrows, const_cast<char*>(""), ptrs.data(), &anynul, st.ptr());
  st.check("reading column " + std::to_string(col));
  for (long r = 0; r < nrows; ++r)
    cells[static_cast<size_t>(r)][c] = stripPadding(buffers[static_cast<size_t>(r)].data());
}

// "true"/"false" per element, "" for a null one; a cell of nulls only is null.
void readLogicalColumn(fitsfile* f, int col, long nrows, long repeat,
                       std::vector<std::vector<std::string>>& cells, size_t c, FitsStatus& st) {
  std::vector<char> values(static_cast<size_t>(nrows * repeat)), nulls(values.size());
  int anynul = 0;
  fits_read_colnull(f, TLOGICAL, col, 1, 1, nrows * repeat, values.data(), nulls.data(), &anynul,
                    st.ptr());
  st.check("reading column " + std::to_string(col));
  for (long r = 0; r < nrows; ++r) {
    std::string joined;
    for (long k = 0; k < repeat; ++k) {
      const size_t i = static_cast<size_t>(r * repeat + k);
      joined += (k ? " " : "") + std::string(nulls[i] ? "" : values[i] ? "true" : "false");
    }
    cells[static_cast<size_t>(r)][c] = trimmed(joined).empty() ? "" : joined;
  }
}

// A bit column as a string of 0s and 1s per row.
void readBitColumn(fitsfile* f, int col, long nrows, long repeat,
                   std::vector<std::vector<std::string>>& cells, size_t c, FitsStatus& st) {
  std::vector<char> bits(static_cast<size_t>(repeat));
  for (long r = 0; r < nrows; ++r) {
    fits_read_col_bit(f, col, r + 1, 1, repeat, bits.data(), st.ptr());
    st.check("reading column " + std::to_string(col));
    std::string& cell = cells[static_cast<size_t>(r)][c];
    for (char b : bits) cell += b ? '1' : '0';
  }
}

// One fixed-width column of nrows > 0 rows; returns false for a type left empty (complex).
bool readFixedColumn(fitsfile* f, int col, int typecode, long nrows, long repeat, long width,
                     std::vector<std::vector<std::string>>& cells, size_t c, FitsStatus& st) {
  switch (typecode) {
    case TSTRING:
      readStringColumn(f, col, nrows, width, cells, c, st);
      return true;
    case TLOGICAL:
      readLogicalColumn(f, col, nrows, repeat, cells, c, st);
      return true;
    case TBYTE:
    case TSBYTE:
    case TSHORT:
    case TUSHORT:
    case TINT:
    case TUINT:
    case TLONG:
    case TLONGLONG:
      readNumbers<long long>(f, TLONGLONG, col, nrows, repeat, cells, c, st);
      return true;
    case TULONG:
    case TULONGLONG:
      readNumbers<unsigned long long>(f, TULONGLONG, col, nrows, repeat, cells, c, st);
      return true;
    case TFLOAT:
      readNumbers<float>(f, TFLOAT, col, nrows, repeat, cells, c, st);
      return true;
    case TDOUBLE:
      readNumbers<double>(f, TDOUBLE, col, nrows, repeat, cells, c, st);
      return true;
    case TBIT:
      readBitColumn(f, col, nrows, repeat, cells, c, st);
      return true;
    default:
      return false;  // complex columns
  }
}

// Every column's keys and cells; returns the names of the columns left empty.
std::vector<std::string> readColumns(fitsfile* f, int ncols, long nrows, uint64_t fileBytes,
                                     const std::string& path, CatalogTable& t, FitsStatus& st) {
  std::vector<std::string> skipped;
  for (int col = 1; col <= ncols; ++col) {
    const size_t c = static_cast<size_t>(col - 1);
    const std::string name = readColumnKeys(f, col, t);
    int typecode = 0;
    long repeat = 0, width = 0;
    fits_get_eqcoltype(f, col, &typecode, &repeat, &width, st.ptr());
    st.check("reading the type of column " + std::to_string(col));
    if (typecode < 0) {
      readVariableLengthColumn(f, col, -typecode, nrows, fileBytes, path, t.cells, c, st);
      continue;
    }
    if (nrows == 0) continue;
    if (!readFixedColumn(f, col, typecode, nrows, repeat, width, t.cells, c, st))
      skipped.push_back(name);
  }
  return skipped;
}

void noteSkippedColumns(const std::vector<std::string>& skipped, CatalogTable& t) {
  if (skipped.empty()) return;
  std::string list;
  for (const auto& s : skipped) list += (list.empty() ? "" : ", ") + s;
  t.note += (t.note.empty() ? "" : "; ") + std::string("complex columns left empty: ") + list;
}

}  // namespace

CatalogTable readFitsTable(const std::string& path, const CatalogReadOptions& options) {
  FitsStatus st(path);
  const FitsTableFile file(path);
  fitsfile* f = file.get();
  const TableChoice choice = chooseTable(f, file, path, options, st);
  int type = 0;
  fits_movabs_hdu(f, choice.pick, &type, st.ptr());
  st.check("moving to the table");

  CatalogTable t;
  nameTable(f, path, choice, options, t);
  int ncols = 0;
  long nrows = 0;
  fits_get_num_cols(f, &ncols, st.ptr());
  fits_get_num_rows(f, &nrows, st.ptr());
  st.check("reading the table size");
  const uint64_t fileBytes = checkTableFits(f, path, nrows, ncols);
  t.cells.assign(static_cast<size_t>(nrows), std::vector<std::string>(static_cast<size_t>(ncols)));
  noteSkippedColumns(readColumns(f, ncols, nrows, fileBytes, path, t, st), t);
  finishTable(t, fileBytes, path);
  return t;
}

}  // namespace stacklens::io
