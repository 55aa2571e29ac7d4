"""A household pantry tracker, written the way many real Python tools are: dynamically typed.

It is the tool that ``pantry.contract`` models (and ``docs/dynamic-tools.md`` walks through). Its
methods accept whatever they are given and behave as Python does with it: a quantity ``"2"`` is
read by ``float()``, ``True`` counts as 1, ``name.strip()`` raises ``AttributeError`` on a number,
arguments are tested by truthiness, and the items it stores carry fields nobody declared.
Failures the tool foresees are returned as ``{"error": ...}``; the others are raised.
"""

from __future__ import annotations

from typing import Any


class Pantry:
    """What is in the pantry, what to buy, and the money left to buy it with."""

    def __init__(
        self,
        items: dict[str, dict[str, Any]] | None = None,
        budget: float = 40.0,
        shopping: list[str] | None = None,
    ) -> None:
        self.items: dict[str, dict[str, Any]] = items if items is not None else {}
        self.budget: Any = budget
        self.shopping: list[str] = shopping if shopping is not None else []

    def add_item(self, name: str, qty: Any = 1, unit: str = "pcs") -> dict[str, Any]:
        """Put ``qty`` of ``name`` in the pantry (it comes off the shopping list)."""
        key = name.strip().lower()
        if not key:
            return {"error": "name must not be empty"}
        amount = float(qty)
        if amount <= 0:
            return {"error": f"qty must be positive, got {qty}"}
        if key in self.items and self.items[key]["unit"] != unit:
            return {"error": f"{key} is counted in {self.items[key]['unit']}, not {unit}"}
        entry = self.items.setdefault(key, {"qty": 0, "unit": unit})
        entry["qty"] += amount
        if key in self.shopping:
            self.shopping.remove(key)
        return {"name": key, "qty": entry["qty"]}

    def use_item(self, name: str, qty: Any = 1) -> dict[str, Any]:
        """Take ``qty`` of ``name`` out; what runs out goes on the shopping list."""
        key = name.strip().lower()
        if key not in self.items:
            return {"error": f"no {key} in the pantry"}
        entry = self.items[key]
        if entry["qty"] < qty:
            return {"error": f"only {entry['qty']} {entry['unit']} of {key} left"}
        entry["qty"] -= qty
        if entry["qty"] == 0:
            del self.items[key]
            self.shopping.append(key)
        return {"name": key, "left": entry["qty"]}

    def set_budget(self, budget: Any) -> dict[str, Any]:
        """Set the money left for shopping."""
        if isinstance(budget, bool) or not isinstance(budget, (int, float)):
            return {"error": "budget must be a number"}
        if budget < 0:
            return {"error": "budget must not be negative"}
        self.budget = budget
        return {"budget": budget}

    def buy(self, name: str, price: Any) -> dict[str, Any]:
        """Buy one of something on the shopping list, if the budget allows."""
        key = name.strip().lower()
        if key not in self.shopping:
            return {"error": f"{key} is not on the shopping list"}
        cost = float(price)
        if cost > self.budget:
            return {"error": f"{cost} is over the budget of {self.budget}"}
        self.budget -= cost
        self.shopping.remove(key)
        self.items[key] = {"qty": 1, "unit": "pcs", "bought for": cost}
        return {"name": key, "budget left": self.budget}

    def tag_item(self, name: str, tags: Any) -> dict[str, Any]:
        """Add tags (one text or a list of texts) to an item."""
        key = name.strip().lower()
        if key not in self.items:
            return {"error": f"no {key} in the pantry"}
        if not tags:
            return {"error": "no tags given"}
        if isinstance(tags, str):
            tags = [tags]
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            return {"error": "tags must be text"}
        known = self.items[key].get("tags", [])
        for tag in tags:
            if tag not in known:
                known = known + [tag]
        self.items[key]["tags"] = known
        return {"name": key, "tags": known}

    def report(self) -> dict[str, Any]:
        """How things stand."""
        return {
            "items": len(self.items),
            "budget left": self.budget,
            "to buy": list(self.shopping),
        }
