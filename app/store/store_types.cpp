#include "store/store_types.h"

#include <array>
#include <utility>

namespace ember::store {
namespace {

// The spellings stored in the database; part of the schema, so never renamed.
constexpr std::array<std::pair<Role, const char*>, 3> kRoles{{
    {Role::System, "system"}, {Role::User, "user"}, {Role::Assistant, "assistant"}}};
constexpr std::array<std::pair<MessageStatus, const char*>, 5> kStatuses{{
    {MessageStatus::Complete, "complete"},
    {MessageStatus::Streaming, "streaming"},
    {MessageStatus::Interrupted, "interrupted"},
    {MessageStatus::Stopped, "stopped"},
    {MessageStatus::Error, "error"}}};

template <class Table, class Value>
QString nameOf(const Table& table, Value value) {
  for (const auto& [v, name] : table)
    if (v == value) return QString::fromLatin1(name);
  return {};
}

template <class Value, class Table>
std::optional<Value> valueOf(const Table& table, const QString& text) {
  for (const auto& [v, name] : table)
    if (text == QLatin1String(name)) return v;
  return std::nullopt;
}

}  // namespace

QString roleName(Role role) { return nameOf(kRoles, role); }
QString statusName(MessageStatus status) { return nameOf(kStatuses, status); }
std::optional<Role> roleFromString(const QString& text) { return valueOf<Role>(kRoles, text); }
std::optional<MessageStatus> statusFromString(const QString& text) {
  return valueOf<MessageStatus>(kStatuses, text);
}

}  // namespace ember::store
