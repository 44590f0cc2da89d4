#pragma once
// Python's arithmetic on template values: int stays int (1 + 1 == 2), / is always float,
// // and % floor toward negative infinity, str + str and list + list concatenate, str * int
// repeats, and mixing types raises Python's TypeError text.
#include "chat/ast.h"
#include "chat/value.h"

namespace ember::chat {

class Interpreter;

Value binaryOperation(Interpreter& interp, BinaryOp op, const Value& left, const Value& right);
Value unaryOperation(UnaryOp op, const Value& operand);
// `item in container` (Python's container.__contains__(item)).
bool containsValue(const Value& container, const Value& item);

}  // namespace ember::chat
