//! Enough of the Itanium C++ ABI's name mangling (<https://itanium-cxx-abi.github.io/cxx-abi/abi.html#mangling>)
//! to say which function of a library a loader error names: `_ZN3c104cuda9SetDeviceEi` is
//! `c10::cuda::SetDevice(int)`. Qualified names, constructors and destructors, ABI tags, vtables and
//! type infos, and parameter lists of plain types (builtins, classes, pointers, references, `const`,
//! substitutions) are read; template arguments are shown as `<…>`, and a parameter list with
//! anything else as `(…)`. Anything that is not a mangled name gives `None`. Linear in the input.

/// The longest symbol read (a loader line holds one name; longer text is not a name).
const MAX_SYMBOL_BYTES: usize = 4096;

/// `_ZN3c104cuda9SetDeviceEi` → `c10::cuda::SetDevice(int)`; dyld's extra leading underscore
/// (`__ZN…`) is taken too. `None` for text that is not a mangled name this reader knows.
pub(crate) fn demangle(symbol: &str) -> Option<String> {
    if symbol.len() > MAX_SYMBOL_BYTES {
        return None;
    }
    let body = symbol.strip_prefix("__Z").or_else(|| symbol.strip_prefix("_Z"))?;
    let mut p = Parser { s: body.as_bytes(), i: 0, subs: Vec::new() };
    let special = if p.eat(b"TV") {
        Some("vtable for ")
    } else if p.eat(b"TI") {
        Some("typeinfo for ")
    } else if p.eat(b"TS") {
        Some("typeinfo name for ")
    } else {
        None
    };
    if let Some(words) = special {
        let ty = p.ty()?;
        return p.done().then(|| format!("{words}{ty}"));
    }
    p.eat(b"L");
    let (name, is_template, konst) = p.name()?;
    let konst = if konst { " const" } else { "" };
    if p.done() {
        return Some(name);
    }
    // A template function's mangling starts with its return type; its parameters are not shown.
    if is_template {
        return Some(format!("{name}(…){konst}"));
    }
    let mut params = Vec::new();
    while !p.done() {
        match p.ty() {
            Some(t) => params.push(t),
            None => return Some(format!("{name}(…){konst}")),
        }
    }
    let params = if params == ["void"] { String::new() } else { params.join(", ") };
    Some(format!("{name}({params}){konst}"))
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    /// The substitution candidates in order (`S_`, `S0_`, …), as text.
    subs: Vec<String>,
}

impl Parser<'_> {
    fn done(&self) -> bool {
        self.i >= self.s.len()
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, lit: &[u8]) -> bool {
        let hit = self.s.get(self.i..).is_some_and(|rest| rest.starts_with(lit));
        if hit {
            self.i += lit.len();
        }
        hit
    }

    fn number(&mut self) -> Option<usize> {
        let start = self.i;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.i += 1;
        }
        std::str::from_utf8(self.s.get(start..self.i)?).ok()?.parse().ok()
    }

    /// `<length><identifier>`.
    fn source_name(&mut self) -> Option<String> {
        let n = self.number()?;
        let end = self.i.checked_add(n).filter(|&e| e <= self.s.len() && n > 0)?;
        let id = std::str::from_utf8(self.s.get(self.i..end)?).ok()?.to_owned();
        self.i = end;
        Some(id)
    }

    /// `S_`, `S<base 36>_`, or one of the abbreviations (`St` is `std`, read by the callers).
    fn substitution(&mut self) -> Option<String> {
        if !self.eat(b"S") {
            return None;
        }
        let abbreviation = match self.peek()? {
            b'a' => Some("std::allocator"),
            b'b' => Some("std::basic_string"),
            b's' => Some("std::string"),
            b'i' => Some("std::istream"),
            b'o' => Some("std::ostream"),
            b'd' => Some("std::iostream"),
            _ => None,
        };
        if let Some(a) = abbreviation {
            self.i += 1;
            return Some(a.to_owned());
        }
        let mut index = 0usize;
        let mut digits = 0usize;
        while let Some(b) = self.peek().filter(|b| *b != b'_') {
            let d = match b {
                b'0'..=b'9' => usize::from(b - b'0'),
                b'A'..=b'Z' => usize::from(b - b'A') + 10,
                _ => return None,
            };
            index = index.checked_mul(36)?.checked_add(d)?;
            digits += 1;
            self.i += 1;
        }
        self.eat(b"_").then_some(())?;
        let slot = if digits == 0 { 0 } else { index.checked_add(1)? };
        self.subs.get(slot).cloned()
    }

    /// Template arguments `I…E`, skipped (nested ones included) and shown as `<…>`.
    fn skip_template_args(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            match self.peek()? {
                // A nested name `N…E` inside the arguments closes with an `E` of its own.
                b'I' | b'N' => depth += 1,
                b'E' => {
                    depth = depth.checked_sub(1)?;
                    if depth == 0 {
                        self.i += 1;
                        return Some(());
                    }
                }
                // A literal `L<type><value>E`: its digits are a value, not a name's length.
                b'L' => {
                    while self.peek()? != b'E' {
                        self.i += 1;
                    }
                }
                // A substitution or template parameter `S<seq>_`, `T<seq>_`.
                b'S' | b'T'
                    if self
                        .s
                        .get(self.i + 1)
                        .is_some_and(|b| b.is_ascii_digit() || b.is_ascii_uppercase() || *b == b'_') =>
                {
                    self.i += 1;
                    while self.peek()? != b'_' {
                        self.i += 1;
                    }
                }
                b'0'..=b'9' => {
                    // A source name may hold an `I` or an `E`: skip it whole.
                    self.source_name()?;
                    continue;
                }
                _ => {}
            }
            self.i += 1;
        }
    }

    /// A function or variable name, whether it ends in template arguments, and whether it is a
    /// `const` member function.
    fn name(&mut self) -> Option<(String, bool, bool)> {
        if self.eat(b"N") {
            return self.nested();
        }
        let mut name = if self.eat(b"St") { format!("std::{}", self.source_name()?) } else { self.source_name()? };
        if self.peek() == Some(b'I') {
            self.subs.push(name.clone());
            self.skip_template_args()?;
            name.push_str("<…>");
            return Some((name, true, false));
        }
        Some((name, false, false))
    }

    /// The rest of `N [K] <prefix>… E`. Every prefix is a substitution candidate (the whole name is
    /// one only as a type: [`Parser::ty`] adds it), a template's name before its arguments too;
    /// `std` and a substitution are none themselves.
    fn nested(&mut self) -> Option<(String, bool, bool)> {
        let konst = self.eat(b"K");
        while matches!(self.peek(), Some(b'r' | b'V' | b'R' | b'O')) {
            self.i += 1;
        }
        let mut parts: Vec<String> = Vec::new();
        // Whether `parts` so far is a candidate when a part follows it.
        let mut candidate = false;
        let mut template = false;
        loop {
            let b = self.peek()?;
            if b == b'E' {
                self.i += 1;
                break;
            }
            if candidate && matches!(b, b'0'..=b'9' | b'a'..=b'z' | b'C' | b'D' | b'I') {
                self.subs.push(parts.join("::"));
            }
            candidate = true;
            template = false;
            match b {
                b'S' if self.s.get(self.i + 1) == Some(&b't') => {
                    self.i += 2;
                    parts.push("std".to_owned());
                    candidate = false;
                }
                b'S' => {
                    parts = vec![self.substitution()?];
                    candidate = false;
                }
                b'I' => {
                    self.skip_template_args()?;
                    parts.last_mut()?.push_str("<…>");
                    template = true;
                }
                b'C' => {
                    self.i += 1;
                    self.eat(b"I");
                    self.number()?;
                    let class = parts.last()?.split('<').next()?.to_owned();
                    parts.push(class);
                }
                b'D' => {
                    self.i += 1;
                    self.number()?;
                    let class = parts.last()?.split('<').next()?.to_owned();
                    parts.push(format!("~{class}"));
                }
                b'B' => {
                    self.i += 1;
                    let tag = self.source_name()?;
                    parts.last_mut()?.push_str(&format!("[abi:{tag}]"));
                }
                b'0'..=b'9' => parts.push(self.source_name()?),
                b'a'..=b'z' => parts.push(self.operator()?),
                _ => return None,
            }
        }
        if parts.is_empty() {
            return None;
        }
        Some((parts.join("::"), template, konst))
    }

    fn operator(&mut self) -> Option<String> {
        let code = self.s.get(self.i..self.i + 2)?;
        let op = match code {
            b"cl" => "operator()",
            b"ix" => "operator[]",
            b"aS" => "operator=",
            b"eq" => "operator==",
            b"ne" => "operator!=",
            b"lt" => "operator<",
            b"gt" => "operator>",
            b"ls" => "operator<<",
            b"rs" => "operator>>",
            b"pl" => "operator+",
            b"mi" => "operator-",
            b"ml" => "operator*",
            b"dv" => "operator/",
            b"nw" => "operator new",
            b"dl" => "operator delete",
            _ => return None,
        };
        self.i += 2;
        Some(op.to_owned())
    }

    /// One parameter or class type.
    fn ty(&mut self) -> Option<String> {
        let b = self.peek()?;
        let builtin = match b {
            b'v' => Some("void"),
            b'b' => Some("bool"),
            b'c' => Some("char"),
            b'a' => Some("signed char"),
            b'h' => Some("unsigned char"),
            b's' => Some("short"),
            b't' => Some("unsigned short"),
            b'i' => Some("int"),
            b'j' => Some("unsigned int"),
            b'l' => Some("long"),
            b'm' => Some("unsigned long"),
            b'x' => Some("long long"),
            b'y' => Some("unsigned long long"),
            b'f' => Some("float"),
            b'd' => Some("double"),
            b'e' => Some("long double"),
            b'w' => Some("wchar_t"),
            b'z' => Some("..."),
            _ => None,
        };
        if let Some(t) = builtin {
            self.i += 1;
            return Some(t.to_owned());
        }
        let t = match b {
            b'P' | b'R' | b'O' | b'K' | b'V' => {
                self.i += 1;
                let inner = self.ty()?;
                match b {
                    b'P' => format!("{inner}*"),
                    b'R' => format!("{inner}&"),
                    b'O' => format!("{inner}&&"),
                    b'K' => format!("{inner} const"),
                    _ => format!("{inner} volatile"),
                }
            }
            b'N' => {
                self.i += 1;
                self.nested()?.0
            }
            b'S' if self.s.get(self.i + 1) == Some(&b't') => {
                self.i += 2;
                format!("std::{}", self.source_name()?)
            }
            b'S' => {
                let sub = self.substitution()?;
                if self.peek() == Some(b'I') {
                    return None;
                }
                // A substitution is itself no new candidate.
                return Some(sub);
            }
            b'0'..=b'9' => self.source_name()?,
            _ => return None,
        };
        if self.peek() == Some(b'I') {
            return None;
        }
        self.subs.push(t.clone());
        Some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::demangle;

    #[test]
    fn libtorch_symbols_from_loader_errors_read_as_c_plus_plus() {
        // `c++filt` (binutils) gives the same for each, with template arguments written out and
        // `Ss` as `std::basic_string<…>`.
        let cases = [
            // Dao-AILab/flash-attention#931.
            ("_ZN3c104cuda9SetDeviceEi", "c10::cuda::SetDevice(int)"),
            ("_ZN2at4_ops5zeros4callEN3c108ArrayRefINS2_6SymIntEEE", "at::_ops::zeros::call(c10::ArrayRef<…>)"),
            ("_ZN3c1019UndefinedTensorImpl10_singletonE", "c10::UndefinedTensorImpl::_singleton"),
            // vllm-project/vllm#611, #13608; NVIDIA/TransformerEngine#1192; idiap/fast-transformers#127;
            // lxxue/FRNN#21; timmeinhardt/trackformer#23 (the symbols of their loader errors).
            ("_ZN3c106detail19maybe_wrap_dim_slowEllb", "c10::detail::maybe_wrap_dim_slow(long, long, bool)"),
            ("_ZN5torch3jit17parseSchemaOrNameERKSsb", "torch::jit::parseSchemaOrName(std::string const&, bool)"),
            (
                "_ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
                "c10::Error::Error(c10::SourceLocation, std::__cxx11::basic_string<…>)",
            ),
            ("_ZTIN3c1021AutogradMetaInterfaceE", "typeinfo for c10::AutogradMetaInterface"),
            ("_ZN3c104cuda20getCurrentCUDAStreamEa", "c10::cuda::getCurrentCUDAStream(signed char)"),
            (
                "_ZN3c106detail14torchCheckFailEPKcS2_jRKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
                "c10::detail::torchCheckFail(char const*, char const*, unsigned int, std::__cxx11::basic_string<…> const&)",
            ),
            (
                "_ZNK3c1010TensorImpl36is_contiguous_nondefault_policy_implENS_12MemoryFormatE",
                "c10::TensorImpl::is_contiguous_nondefault_policy_impl(c10::MemoryFormat) const",
            ),
            (
                "_ZN3c106detail14torchCheckFailEPKcS2_jS2_",
                "c10::detail::torchCheckFail(char const*, char const*, unsigned int, char const*)",
            ),
            (
                "_ZN3c1015SmallVectorBaseIjE8grow_podEPKvmm",
                "c10::SmallVectorBase<…>::grow_pod(void const*, unsigned long, unsigned long)",
            ),
            (
                "_ZN5torch8autograd12VariableInfoC1ERKN2at6TensorE",
                "torch::autograd::VariableInfo::VariableInfo(at::Tensor const&)",
            ),
            ("_ZN3c1017RegisterOperatorsD1Ev", "c10::RegisterOperators::~RegisterOperators()"),
            ("__ZN3c1017RegisterOperatorsD1Ev", "c10::RegisterOperators::~RegisterOperators()"),
            ("_ZTVN3c1011StorageImplE", "vtable for c10::StorageImpl"),
            ("_ZNK5torch8autograd4Node4nameB5cxx11Ev", "torch::autograd::Node::name[abi:cxx11]() const"),
        ];
        for (symbol, want) in cases {
            assert_eq!(demangle(symbol).as_deref(), Some(want), "{symbol}");
        }
    }

    #[test]
    fn text_that_is_not_a_mangled_name_is_none() {
        for s in ["", "_Z", "cudaGetDriverEntryPointByVersion", "_ZN", "_ZN3c1", "_ZN99c10E", "_ZNE", "_ZN3c10S9_E"] {
            assert_eq!(demangle(s), None, "{s:?}");
        }
        assert_eq!(demangle(&format!("_ZN{}E", "1a".repeat(5000))), None);
    }

    #[test]
    fn long_and_truncated_symbols_end_without_panic() {
        let symbol = "_ZN3c106detail14torchCheckFailEPKcS2_jRKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE";
        for end in 0..symbol.len() {
            let _ = demangle(&symbol[..end]);
        }
        let nested = format!("_ZN3c10{}E", "I".repeat(2000));
        assert_eq!(demangle(&nested), None);
        let long = format!("_ZN3c10{}4lastEv", "3abc".repeat(900));
        assert!(demangle(&long).is_some_and(|d| d.ends_with("::last()")));
    }
}
