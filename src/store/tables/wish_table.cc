#include "store/tables/wish_table.h"

#include "store/tables/row_values.h"

namespace baton {

Result<std::optional<WishRow>> FindWishRow(Txn& txn, const std::string& project_key,
                                           const std::string& slug) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT run_id, signature, COALESCE(wish_file, ''), created_at "
                             "FROM wishes WHERE project_key = ? AND slug = ?",
                             {SqlText(project_key), SqlText(slug)}));
  if (rows.empty()) return std::optional<WishRow>();
  const Row& r = rows[0];
  return std::optional<WishRow>(WishRow{.project_key = project_key,
                                        .slug = slug,
                                        .run_id = r.Str(0),
                                        .wish_file = r.Str(2),
                                        .signature = r.Str(1),
                                        .created_at = r.Str(3)});
}

Result<std::vector<std::string>> ListWishSlugs(Txn& txn, const std::string& project_key) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT slug FROM wishes WHERE project_key = ? ORDER BY slug",
                             {SqlText(project_key)}));
  return FirstColumn(rows);
}

Status InsertWishRow(Txn& txn, const WishRow& w) {
  return txn
      .Exec(
          "INSERT INTO wishes (project_key, slug, run_id, wish_file, signature, "
          "created_at) VALUES (?, ?, ?, ?, ?, ?)",
          {SqlText(w.project_key), SqlText(w.slug), SqlText(w.run_id), SqlTextOrNull(w.wish_file),
           SqlText(w.signature), SqlText(w.created_at)})
      .status();
}

Status DeleteWishRow(Txn& txn, const std::string& project_key, const std::string& slug) {
  return txn
      .Exec("DELETE FROM wishes WHERE project_key = ? AND slug = ?",
            {SqlText(project_key), SqlText(slug)})
      .status();
}

// ---- What engine/interchange and engine/inbox ask (imports, exports, mirrors, inbox) ----

Result<bool> InsertImportedWish(Txn& txn, const ImportedWish& w) {
  ASSIGN_OR_RETURN(int64_t n, txn.Exec("INSERT INTO wishes (project_key, slug, run_id, wish_file, "
                                       "signature, created_at) VALUES (?, ?, ?, ?, ?, ?) "
                                       "ON CONFLICT DO NOTHING",
                                       {SqlText(w.project_key), SqlText(w.slug), SqlText(w.run_id),
                                        SqlNullable(w.wish_file),
                                        SqlText(w.signature), SqlText(w.created_at)}));
  return n != 0;
}

}  // namespace baton
