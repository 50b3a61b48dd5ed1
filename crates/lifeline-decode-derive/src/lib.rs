//! `#[derive(Decode)]`: one reader per type over `lifeline_decode::Json`,
//! and `#[derive(Encode)]`: one writer per type over
//! `lifeline_encode::Writer`, both from the same `#[serde]` attributes
//! serde's derive reads, so that they cannot drift apart field by field.
//!
//! Understood: on a container `rename_all = "snake_case"`, `tag`,
//! `content`, `transparent`, `from`, `try_from`, `into`, `default` and
//! `deny_unknown_fields`; on a field `rename`, `default`, `default =
//! "path"`, `with = "module"` (the module's `decode` and `encode`),
//! `skip_serializing` and `skip_serializing_if`; on a variant `rename`.
//! Each derive uses the ones that shape its direction. Anything else is a
//! compile error, so a new serde attribute cannot be silently misread.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{
    parse_macro_input, Data, DeriveInput, Expr, ExprLit, Fields, GenericParam, Ident, Lit, LitStr,
    Path,
};

mod encode;

#[proc_macro_derive(Decode, attributes(serde))]
pub fn derive_decode(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match expand(&input) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// `#[derive(Encode)]`: one writer per type over `lifeline_encode::Writer`
/// (the `encode` module).
#[proc_macro_derive(Encode, attributes(serde))]
pub fn derive_encode(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match encode::expand(&input) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

#[derive(Default)]
struct Container {
    snake_case: bool,
    tag: Option<String>,
    content: Option<String>,
    transparent: bool,
    from: Option<syn::Type>,
    try_from: Option<syn::Type>,
    into: Option<syn::Type>,
    default: bool,
    deny_unknown_fields: bool,
}

#[derive(Default)]
struct Field {
    rename: Option<String>,
    default: Option<Option<Path>>,
    with: Option<Path>,
    skip_serializing_if: Option<Path>,
    skip_serializing: bool,
}

/// A string given to an attribute, also where a `macro_rules!` expansion
/// wrapped the literal in an invisible group.
fn string(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<String> {
    let mut expr: Expr = meta.value()?.parse()?;
    while let Expr::Group(group) = expr {
        expr = *group.expr;
    }
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Ok(s.value()),
        other => Err(syn::Error::new_spanned(other, "expected a string")),
    }
}

/// Each item of every `#[serde(...)]` attribute, by name.
fn each_serde_item(
    attrs: &[syn::Attribute],
    mut item: impl FnMut(&str, &syn::meta::ParseNestedMeta<'_>) -> syn::Result<()>,
) -> syn::Result<()> {
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        attr.parse_nested_meta(|meta| {
            let name = meta
                .path
                .get_ident()
                .map(Ident::to_string)
                .unwrap_or_default();
            item(&name, &meta)
        })?;
    }
    Ok(())
}

fn container(attrs: &[syn::Attribute]) -> syn::Result<Container> {
    let mut c = Container::default();
    each_serde_item(attrs, |name, meta| {
        match name {
            "rename_all" => {
                let rule = string(meta)?;
                if rule != "snake_case" {
                    return Err(meta.error("only rename_all = \"snake_case\" is read"));
                }
                c.snake_case = true;
            }
            "tag" => c.tag = Some(string(meta)?),
            "content" => c.content = Some(string(meta)?),
            "transparent" => c.transparent = true,
            "from" => c.from = Some(syn::parse_str(&string(meta)?)?),
            "try_from" => c.try_from = Some(syn::parse_str(&string(meta)?)?),
            "default" if !meta.input.peek(syn::Token![=]) => c.default = true,
            "into" => c.into = Some(syn::parse_str(&string(meta)?)?),
            "deny_unknown_fields" => c.deny_unknown_fields = true,
            _ => return Err(meta.error("a serde attribute Decode and Encode do not read")),
        }
        Ok(())
    })?;
    Ok(c)
}

fn field_attrs(attrs: &[syn::Attribute]) -> syn::Result<Field> {
    let mut f = Field::default();
    each_serde_item(attrs, |name, meta| {
        match name {
            "rename" => f.rename = Some(string(meta)?),
            "default" if meta.input.peek(syn::Token![=]) => {
                f.default = Some(Some(syn::parse_str(&string(meta)?)?))
            }
            "default" => f.default = Some(None),
            "with" => f.with = Some(syn::parse_str(&string(meta)?)?),
            "skip_serializing_if" => f.skip_serializing_if = Some(syn::parse_str(&string(meta)?)?),
            "skip_serializing" => f.skip_serializing = true,
            _ => return Err(meta.error("a serde attribute Decode and Encode do not read")),
        }
        Ok(())
    })?;
    Ok(f)
}

fn snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The type's generics, each type parameter bound by `bound`, for the
/// impl.
fn bounded(input: &DeriveInput, bound: syn::TypeParamBound) -> syn::Generics {
    let mut generics = input.generics.clone();
    for param in &mut generics.params {
        if let GenericParam::Type(t) = param {
            t.bounds.push(bound.clone());
            // A default (`T = Phrase`) may not appear in an impl's generics.
            t.default = None;
            t.eq_token = None;
        }
    }
    generics
}

fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let c = container(&input.attrs)?;
    let name = &input.ident;
    let generics = bounded(input, syn::parse_quote!(::lifeline_decode::Decode));
    let (impl_generics, _, _) = generics.split_for_impl();
    let (_, ty_generics, where_clause) = input.generics.split_for_impl();

    let body = if let Some(from) = &c.from {
        quote! {
            ::core::result::Result::Ok(<Self as ::core::convert::From<#from>>::from(
                <#from as ::lifeline_decode::Decode>::decode(json)?,
            ))
        }
    } else if let Some(from) = &c.try_from {
        quote! {
            <Self as ::core::convert::TryFrom<#from>>::try_from(
                <#from as ::lifeline_decode::Decode>::decode(json)?,
            )
            .map_err(::lifeline_decode::Error::invalid)
        }
    } else {
        match &input.data {
            Data::Struct(s) => {
                let path = quote!(#name);
                if c.transparent {
                    transparent(&path, &s.fields)?
                } else {
                    let read = read_fields(&path, &s.fields, &c, Some(quote!(json)))?;
                    quote!(::core::result::Result::Ok(#read))
                }
            }
            Data::Enum(e) => enumeration(name, e, &c)?,
            Data::Union(_) => {
                return Err(syn::Error::new(Span::call_site(), "Decode reads no unions"))
            }
        }
    };
    Ok(quote! {
        impl #impl_generics ::lifeline_decode::Decode for #name #ty_generics #where_clause {
            fn decode(
                json: ::lifeline_decode::Json<'_>,
            ) -> ::core::result::Result<Self, ::lifeline_decode::Error> {
                #body
            }
        }
    })
}

fn transparent(path: &TokenStream, fields: &Fields) -> syn::Result<TokenStream> {
    let only = match fields.iter().collect::<Vec<_>>()[..] {
        [only] => only,
        _ => {
            return Err(syn::Error::new(
                Span::call_site(),
                "transparent needs exactly one field",
            ))
        }
    };
    let value = quote!(::lifeline_decode::Decode::decode(json)?);
    Ok(match &only.ident {
        Some(ident) => quote!(::core::result::Result::Ok(#path { #ident: #value })),
        None => quote!(::core::result::Result::Ok(#path(#value))),
    })
}

/// The expression building `path` (a struct or a variant) from `json`, or
/// (`None`) from the fields left in `object`, an internally tagged enum's
/// object after its tag was taken out.
fn read_fields(
    path: &TokenStream,
    fields: &Fields,
    c: &Container,
    source: Option<TokenStream>,
) -> syn::Result<TokenStream> {
    let json = source.clone().unwrap_or_else(|| quote!(object.into_json()));
    Ok(match fields {
        Fields::Unit => quote! {{
            <() as ::lifeline_decode::Decode>::decode(#json)?;
            #path
        }},
        Fields::Unnamed(unnamed) if unnamed.unnamed.len() == 1 => {
            quote!(#path(::lifeline_decode::Decode::decode(#json)?))
        }
        Fields::Unnamed(unnamed) => {
            let len = unnamed.unnamed.len();
            let items = (0..len).map(|i| quote!(::lifeline_decode::item(&mut items, #i)?));
            quote! {{
                let mut items = ::lifeline_decode::tuple(#json, #len)?;
                #path(#(#items),*)
            }}
        }
        Fields::Named(named) => {
            let mut reads = Vec::new();
            let mut keys = Vec::new();
            for field in &named.named {
                let attrs = field_attrs(&field.attrs)?;
                let ident = field.ident.as_ref().expect("a named field");
                let key = LitStr::new(&field_key(field, attrs.rename.clone()), ident.span());
                keys.push(key.clone());
                let absent = match (&attrs.default, c.default) {
                    (Some(Some(function)), _) => Some(quote!(#function())),
                    (Some(None), _) => Some(quote!(::core::default::Default::default())),
                    (None, true) => Some(quote!(__default.#ident)),
                    (None, false) => None,
                };
                let read = match (&attrs.with, absent) {
                    (Some(module), absent) => {
                        let absent = match absent {
                            Some(value) => quote!(::core::result::Result::Ok(#value)),
                            None => quote!(::core::result::Result::Err(
                                ::lifeline_decode::Error::missing(#key)
                            )),
                        };
                        quote!(object.field_with(#key, #module::decode, || #absent)?)
                    }
                    (None, Some(value)) => quote!(object.field_or(#key, || #value)?),
                    (None, None) => quote!(object.field(#key)?),
                };
                reads.push(quote!(#ident: #read));
            }
            let default = c
                .default
                .then(|| quote!(let __default: Self = ::core::default::Default::default();));
            let open = match (source, c.deny_unknown_fields) {
                (Some(json), true) => {
                    quote!(let mut object = ::lifeline_decode::Object::known(#json, &[#(#keys),*])?;)
                }
                (Some(json), false) => {
                    quote!(let mut object = ::lifeline_decode::Object::of(#json)?;)
                }
                (None, true) => quote!(object.deny_unknown(&[#(#keys),*])?;),
                (None, false) => quote!(),
            };
            quote! {{
                #default
                #open
                #path { #(#reads),* }
            }}
        }
    })
}

/// A named field's key in JSON: its `rename`, or its name (without a raw
/// identifier's `r#`).
fn field_key(field: &syn::Field, rename: Option<String>) -> String {
    rename.unwrap_or_else(|| {
        let text = field
            .ident
            .as_ref()
            .map(Ident::to_string)
            .unwrap_or_default();
        text.strip_prefix("r#").map(str::to_string).unwrap_or(text)
    })
}

/// A variant's name in JSON: its `rename`, or its name under the enum's
/// `rename_all`. A variant takes no other attribute.
fn variant_name(variant: &syn::Variant, c: &Container) -> syn::Result<String> {
    let attrs = field_attrs(&variant.attrs)?;
    if attrs.default.is_some()
        || attrs.with.is_some()
        || attrs.skip_serializing
        || attrs.skip_serializing_if.is_some()
    {
        return Err(syn::Error::new_spanned(
            variant,
            "a variant is only renamed",
        ));
    }
    let ident = variant.ident.to_string();
    Ok(attrs
        .rename
        .unwrap_or_else(|| if c.snake_case { snake(&ident) } else { ident }))
}

fn enumeration(name: &Ident, e: &syn::DataEnum, c: &Container) -> syn::Result<TokenStream> {
    if e.variants.is_empty() {
        return Err(syn::Error::new(
            Span::call_site(),
            "Decode reads no enum without variants",
        ));
    }
    let mut names = Vec::new();
    let mut arms = Vec::new();
    // A variant's fields are read like a struct's, under the enum's
    // `deny_unknown_fields`.
    let plain = Container {
        deny_unknown_fields: c.deny_unknown_fields,
        ..Container::default()
    };
    for variant in &e.variants {
        let ident = &variant.ident;
        let key = LitStr::new(&variant_name(variant, c)?, ident.span());
        names.push(key.clone());
        let path = quote!(#name::#ident);
        let arm = match (&c.tag, &c.content) {
            // Internally tagged: the variant's fields sit beside the tag.
            (Some(_), None) => match &variant.fields {
                Fields::Unit => quote!(#path),
                Fields::Unnamed(u) if u.unnamed.len() == 1 => {
                    quote!(#path(::lifeline_decode::Decode::decode(object.into_json())?))
                }
                Fields::Unnamed(_) => {
                    return Err(syn::Error::new_spanned(
                        variant,
                        "an internally tagged enum has no tuple variants",
                    ))
                }
                Fields::Named(_) => read_fields(&path, &variant.fields, &plain, None)?,
            },
            // Externally or adjacently tagged: the content is a value of
            // its own.
            _ => match &variant.fields {
                Fields::Unit => quote! {{
                    ::lifeline_decode::no_content(content)?;
                    #path
                }},
                _ => read_fields(
                    &path,
                    &variant.fields,
                    &plain,
                    Some(quote!(::lifeline_decode::content(content)?)),
                )?,
            },
        };
        arms.push(arm);
    }
    // An enum of names only, externally tagged, is read by its name's
    // place in `VARIANTS` (one shared search) and a match on that number:
    // a match on the name compares it with every name, in every such enum.
    let units = e.variants.iter().all(|v| matches!(v.fields, Fields::Unit));
    let unit_only = (units && c.tag.is_none()).then(|| {
        let count = e.variants.len();
        let arms = e.variants.iter().enumerate().map(|(i, v)| {
            let ident = &v.ident;
            if i + 1 == count {
                quote!(_ => #name::#ident,)
            } else {
                quote!(#i => #name::#ident,)
            }
        });
        quote! {
            const VARIANTS: &[&str] = &[#(#names),*];
            ::core::result::Result::Ok(match ::lifeline_decode::unit_variant(json, VARIANTS)? {
                #(#arms)*
            })
        }
    });
    if let Some(body) = unit_only {
        return Ok(body);
    }
    let head = match (&c.tag, &c.content) {
        (Some(tag), None) => quote! {
            let mut object = ::lifeline_decode::Object::of(json)?;
            let variant = object.tag(#tag)?;
        },
        (Some(tag), Some(content)) => quote! {
            let mut object = ::lifeline_decode::Object::of(json)?;
            let variant = object.tag(#tag)?;
            let content = object.take(#content)?;
        },
        (None, Some(_)) => return Err(syn::Error::new(Span::call_site(), "content needs a tag")),
        (None, None) => quote! {
            let (variant, content) = ::lifeline_decode::variant(json)?;
        },
    };
    // The variant is found by its name's place in `VARIANTS` (one shared
    // search) and a match on that number, as for an enum of names only.
    let count = arms.len();
    let arms = arms.into_iter().enumerate().map(|(i, arm)| {
        if i + 1 == count {
            quote!(_ => #arm,)
        } else {
            quote!(#i => #arm,)
        }
    });
    Ok(quote! {
        const VARIANTS: &[&str] = &[#(#names),*];
        #head
        ::core::result::Result::Ok(match ::lifeline_decode::variant_index(&variant, VARIANTS)? {
            #(#arms)*
        })
    })
}
