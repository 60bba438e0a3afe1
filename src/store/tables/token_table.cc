#include "store/tables/token_table.h"

#include "store/tables/row_values.h"

namespace baton {
namespace {

constexpr char kTokenColumns[] =
    "id, agent_id, role, note, created_by, created_at, revoked_at, grants";

Token TokenFromRow(const Row& r) {
  return Token{.id = r.Str(0),
               .agent_id = r.Str(1),
               .role = r.Str(2),
               .grants = GrantsFromText(r.Str(7)),
               .note = r.Str(3),
               .created_by = r.Str(4),
               .created_at = r.Str(5),
               .revoked_at = TextOrNone(r, 6)};
}

}  // namespace

Status InsertTokenRow(Txn& txn, const Token& t, const std::string& hash) {
  return txn
      .Exec(
          "INSERT INTO tokens (id, hash, agent_id, role, note, created_by, "
          "created_at, grants) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
          {SqlText(t.id), SqlText(hash), SqlText(t.agent_id), SqlText(t.role), SqlText(t.note),
           SqlText(t.created_by), SqlText(t.created_at), SqlText(t.grants.dump())})
      .status();
}

Result<std::vector<Token>> ListTokenRows(Txn& txn) {
  ASSIGN_OR_RETURN(std::vector<Row> rows, txn.Query(std::string("SELECT ") + kTokenColumns +
                                                        " FROM tokens ORDER BY created_at, id",
                                                    {}));
  std::vector<Token> tokens;
  tokens.reserve(rows.size());
  for (const Row& r : rows) tokens.push_back(TokenFromRow(r));
  return tokens;
}

Result<std::optional<Token>> FindTokenRow(Txn& txn, const std::string& id) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query(std::string("SELECT ") + kTokenColumns + " FROM tokens WHERE id = ?",
                             {SqlText(id)}));
  if (rows.empty()) return std::optional<Token>();
  return std::optional<Token>(TokenFromRow(rows[0]));
}

Status RevokeTokenRow(Txn& txn, const std::string& id, const std::string& now) {
  return txn.Exec("UPDATE tokens SET revoked_at = ? WHERE id = ?", {SqlText(now), SqlText(id)})
      .status();
}

Result<std::optional<TokenHolder>> FindLiveTokenHolder(Txn& txn, const std::string& hash) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT agent_id, role, grants FROM tokens WHERE hash = ? AND "
                             "revoked_at IS NULL",
                             {SqlText(hash)}));
  if (rows.empty()) return std::optional<TokenHolder>();
  return std::optional<TokenHolder>(TokenHolder{.agent_id = rows[0].Str(0),
                                                .role = rows[0].Str(1),
                                                .grants = GrantsFromText(rows[0].Str(2))});
}

// ---- What engine/ledger and the profiles ask (replay, sgai, genie, stigmergy, sinfonia) ----

Result<std::vector<TokenStateForReplay>> ListTokenStatesForReplay(Txn& txn) {
  ASSIGN_OR_RETURN(std::vector<Row> rows,
                   txn.Query("SELECT id, agent_id, role, CASE WHEN revoked_at IS NULL THEN 0 "
                             "ELSE 1 END "
                             "FROM tokens "
                             "ORDER BY id",
                             {}));
  std::vector<TokenStateForReplay> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back({r.Str(0), r.Str(1), r.Str(2), r.Int(3) != 0});
  return out;
}

}  // namespace baton
