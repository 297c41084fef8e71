// checkTileDescriptors and checkTileStreams: the tile table of a compressed image read through
// cfitsio, each tile checked before cfitsio's decoders see it.
#include "io/fits_tile_checks.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "io/fits_cards.h"
#include "io/fits_support.h"
#include "io/plio_check.h"
#include "io/rice_check.h"

namespace stacklens::io {
namespace {

// How a RICE or PLIO image is cut into tiles, and where their bytes are.
struct TileGrid {
  std::vector<LONGLONG> axes;       // ZNAXISn
  std::vector<LONGLONG> tile;       // ZTILEn, clamped to 1..ZNAXISn
  int column = 0;                   // COMPRESSED_DATA
  int bytePix = 4, blockSize = 32;  // RICE's ZNAMEn/ZVALn parameters
};

// As cfitsio's imcomp_get_compressed_image_par reads them: ZVAL1 is the block size and ZVAL2 the
// bytes per pixel, whatever ZNAME1 and ZNAME2 say (found by fits_fuzzer: with ZNAME1 renamed, a
// walk over the names stopped before ZVAL2 = 2, this check took 4-byte pixels, and cfitsio's
// 2-byte decoder ran past the tile).
void readRiceParameters(fitsfile* f, TileGrid& grid) {
  int status = 0, value = 0;
  if (fits_read_key(f, TINT, "ZVAL1", &value, nullptr, &status) == 0) grid.blockSize = value;
  status = 0;
  if (fits_read_key(f, TINT, "ZVAL2", &value, nullptr, &status) == 0) grid.bytePix = value;
}

// The grid, or nothing when the table's structural keywords cannot be read.
std::optional<TileGrid> readTileGrid(fitsfile* f) {
  int status = 0, znaxis = 0;
  TileGrid grid;
  fits_read_key(f, TINT, "ZNAXIS", &znaxis, nullptr, &status);
  fits_get_colnum(f, CASEINSEN, const_cast<char*>("COMPRESSED_DATA"), &grid.column, &status);
  if (status != 0 || znaxis < 1 || znaxis > 6) return std::nullopt;
  grid.axes.assign(size_t(znaxis), 1);
  grid.tile.assign(size_t(znaxis), 1);
  for (size_t i = 0; i < size_t(znaxis); ++i) {
    const std::string k = std::to_string(i + 1);
    fits_read_key(f, TLONGLONG, ("ZNAXIS" + k).c_str(), &grid.axes[i], nullptr, &status);
    int tileStatus = 0;
    grid.tile[i] = i == 0 ? grid.axes[0] : 1;  // cfitsio's default: whole rows
    fits_read_key(f, TLONGLONG, ("ZTILE" + k).c_str(), &grid.tile[i], nullptr, &tileStatus);
    grid.tile[i] = std::clamp<LONGLONG>(grid.tile[i], 1, std::max<LONGLONG>(grid.axes[i], 1));
  }
  readRiceParameters(f, grid);
  if (status != 0) return std::nullopt;
  return grid;
}

// The pixels of tile `row` (1-based): its place in the grid of tiles (axis 1 fastest), clipped
// at the image's edges.
LONGLONG tilePixels(const TileGrid& grid, LONGLONG row) {
  LONGLONG index = row - 1, pixels = 1;
  for (size_t i = 0; i < grid.axes.size(); ++i) {
    const LONGLONG per = (grid.axes[i] + grid.tile[i] - 1) / grid.tile[i];
    const LONGLONG at = index % per;
    index /= per;
    pixels *= std::min(grid.tile[i], grid.axes[i] - at * grid.tile[i]);
  }
  return pixels;
}

// Whether the tile's stream holds its pixels (true too when its bytes cannot be read: cfitsio
// then reports that itself).
bool tileStreamFits(fitsfile* f, const TileGrid& grid, bool rice, LONGLONG row, LONGLONG length,
                    LONGLONG pixels, int& status) {
  if (rice) {
    std::vector<unsigned char> bytes(static_cast<size_t>(length));
    fits_read_col(f, TBYTE, grid.column, row, 1, length, nullptr, bytes.data(), nullptr, &status);
    return status != 0 ||
           riceTileFits(bytes.data(), bytes.size(), pixels, grid.bytePix, grid.blockSize);
  }
  // As cfitsio gives them to its decoder: the column's elements read as 16-bit integers.
  std::vector<int16_t> words(static_cast<size_t>(length));
  fits_read_col(f, TSHORT, grid.column, row, 1, length, nullptr, words.data(), nullptr, &status);
  return status != 0 || plioTileFits(words.data(), words.size(), pixels);
}

void checkEveryTileStream(fitsfile* f, const TileGrid& grid, bool rice, const std::string& path,
                          const std::string& where) {
  int status = 0;
  LONGLONG rows = 0;
  fits_get_num_rowsll(f, &rows, &status);
  for (LONGLONG row = 1; row <= rows && status == 0; ++row) {
    const LONGLONG pixels = tilePixels(grid, row);
    LONGLONG length = 0, offset = 0;
    fits_read_descriptll(f, grid.column, row, &length, &offset, &status);
    if (status != 0 || length <= 0) break;  // an uncompressed tile lives in another column
    if (!tileStreamFits(f, grid, rice, row, length, pixels, status))
      throw IoError(path, "damaged compressed image" + where + ": " + (rice ? "RICE" : "PLIO") +
                              " tile " + std::to_string(row) + " ends before its " +
                              std::to_string(pixels) + " pixels");
  }
}

}  // namespace

void checkTileDescriptors(fitsfile* f, const std::string& path, const std::string& where) {
  FitsStatus status(path);
  LONGLONG rows = 0, heap = 0;
  int columns = 0;
  fits_get_num_rowsll(f, &rows, status.ptr());
  fits_get_num_cols(f, &columns, status.ptr());
  fits_read_key(f, TLONGLONG, "PCOUNT", &heap, nullptr, status.ptr());
  status.check("cannot read the tile table" + where);
  for (int col = 1; col <= columns; ++col) {
    int type = 0;
    LONGLONG repeat = 0, width = 0;
    fits_get_coltypell(f, col, &type, &repeat, &width, status.ptr());
    status.check("cannot read the tile table" + where);
    if (type >= 0) continue;  // not a variable-length column
    for (LONGLONG row = 1; row <= rows; ++row) {
      LONGLONG length = 0, offset = 0;
      fits_read_descriptll(f, col, row, &length, &offset, status.ptr());
      status.check("cannot read tile " + std::to_string(row) + where);
      if (length < 0 || offset < 0 || width < 0 || (width > 0 && length > heap / width) ||
          offset > heap - length * std::max<LONGLONG>(width, 1))
        throw IoError(path, "damaged compressed image" + where + ": tile " + std::to_string(row) +
                                " claims " + std::to_string(length) + " elements at heap offset " +
                                std::to_string(offset) + " but the heap holds " +
                                std::to_string(heap) + " bytes");
    }
  }
}

void checkTileStreams(fitsfile* f, const std::string& path, const std::string& where) {
  const std::string type = trimBlanks(readOptionalKey(f, "ZCMPTYPE").value_or(""));
  const bool rice = type == "RICE_1" || type == "RICE_ONE", plio = type == "PLIO_1";
  if (!rice && !plio) return;
  const std::optional<TileGrid> grid = readTileGrid(f);
  fits_clear_errmsg();
  if (grid) checkEveryTileStream(f, *grid, rice, path, where);
  fits_clear_errmsg();
}

}  // namespace stacklens::io
