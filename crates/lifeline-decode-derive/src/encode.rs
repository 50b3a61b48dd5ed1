//! `#[derive(Encode)]`: the text serde's derived `Serialize` gives through
//! serde_json, written by one function per type.
//!
//! What each shape writes (serde's data model in JSON):
//! - a struct: an object of its fields in declaration order; a newtype
//!   struct or a `transparent` one: its field; a tuple struct: an array;
//! - an enum, externally tagged: a unit variant as its name, any other as
//!   an object of one key, its name, holding its content;
//! - internally tagged (`tag`): an object with the tag first, then the
//!   variant's fields (a newtype variant's content is an object, joined
//!   to this one);
//! - adjacently tagged (`tag`, `content`): the tag, then the content under
//!   its own key (none for a unit variant).
//!
//! Every key and tag is known here, so it is written as one literal
//! (`"name":`), checked to need no escaping.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::{Data, DeriveInput, Fields, Ident, LitStr};

use crate::{container, field_attrs, Container};

pub(crate) fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let c = container(&input.attrs)?;
    let name = &input.ident;
    let generics = crate::bounded(input, syn::parse_quote!(::lifeline_encode::Encode));
    let (impl_generics, _, _) = generics.split_for_impl();
    let (_, ty_generics, where_clause) = input.generics.split_for_impl();

    let body = if let Some(into) = &c.into {
        quote! {
            ::lifeline_encode::Encode::encode(
                &<#into as ::core::convert::From<Self>>::from(::core::clone::Clone::clone(self)),
                w,
            );
        }
    } else {
        match &input.data {
            Data::Struct(s) => {
                let (pattern, fields) = bind(quote!(Self), &s.fields);
                let write = if c.transparent {
                    match &fields[..] {
                        [(_, only)] => quote!(::lifeline_encode::Encode::encode(#only, w);),
                        _ => {
                            return Err(syn::Error::new(
                                Span::call_site(),
                                "transparent needs exactly one field",
                            ))
                        }
                    }
                } else {
                    content(&s.fields, &fields)?
                };
                quote! {
                    let #pattern = self;
                    #write
                }
            }
            Data::Enum(e) => enumeration(e, &c)?,
            Data::Union(_) => {
                return Err(syn::Error::new(
                    Span::call_site(),
                    "Encode writes no unions",
                ))
            }
        }
    };
    Ok(quote! {
        impl #impl_generics ::lifeline_encode::Encode for #name #ty_generics #where_clause {
            #[allow(unused_variables)]
            fn encode(&self, w: &mut ::lifeline_encode::Writer) {
                #body
            }
        }
    })
}

/// A pattern binding each of `fields` by reference, and the bindings, each
/// with its field.
fn bind<'a>(path: TokenStream, fields: &'a Fields) -> (TokenStream, Vec<(&'a syn::Field, Ident)>) {
    let bound: Vec<_> = fields
        .iter()
        .enumerate()
        .map(|(i, f)| (f, format_ident!("__f{}", i)))
        .collect();
    let pattern = match fields {
        Fields::Unit => path,
        Fields::Unnamed(_) => {
            let names = bound.iter().map(|(_, b)| b);
            quote!(#path(#(#names),*))
        }
        Fields::Named(_) => {
            let pairs = bound.iter().map(|(f, b)| {
                let ident = &f.ident;
                quote!(#ident: #b)
            });
            quote!(#path { #(#pairs),* })
        }
    };
    (pattern, bound)
}

/// A key or a variant's name, which is written as it is: it must need no
/// escaping in JSON.
fn plain(name: &str) -> syn::Result<&str> {
    if name.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
        return Err(syn::Error::new(
            Span::call_site(),
            format!("{name:?} would need escaping"),
        ));
    }
    Ok(name)
}

fn literal(text: String) -> LitStr {
    LitStr::new(&text, Span::call_site())
}

/// The writes of a struct's or a variant's fields, as serde writes the
/// content: a unit as null, one unnamed field as itself, several as an
/// array, named ones as an object.
fn content(fields: &Fields, bound: &[(&syn::Field, Ident)]) -> syn::Result<TokenStream> {
    Ok(match fields {
        Fields::Unit => quote!(w.null();),
        Fields::Unnamed(_) if bound.len() == 1 => {
            let only = &bound[0].1;
            quote!(::lifeline_encode::Encode::encode(#only, w);)
        }
        Fields::Unnamed(_) => {
            let items = bound.iter().map(|(_, b)| {
                quote! {
                    w.item();
                    ::lifeline_encode::Encode::encode(#b, w);
                }
            });
            quote! {
                w.raw("[");
                #(#items)*
                w.raw("]");
            }
        }
        Fields::Named(_) => {
            let fields = named_fields(bound)?;
            quote! {
                w.raw("{");
                #fields
                w.raw("}");
            }
        }
    })
}

/// The content after `head`, an object's opening and key, closing it.
fn wrapped(
    head: String,
    fields: &Fields,
    bound: &[(&syn::Field, Ident)],
) -> syn::Result<TokenStream> {
    let head = literal(head);
    let inner = content(fields, bound)?;
    Ok(quote! {
        w.raw(#head);
        #inner
        w.raw("}");
    })
}

/// Each named field as `"key":value`, each after a separator; skipped as
/// its attributes say.
fn named_fields(bound: &[(&syn::Field, Ident)]) -> syn::Result<TokenStream> {
    let mut writes = Vec::new();
    for (field, b) in bound {
        let attrs = field_attrs(&field.attrs)?;
        if attrs.skip_serializing {
            continue;
        }
        let key = literal(format!(
            "\"{}\":",
            plain(&crate::field_key(field, attrs.rename))?
        ));
        let value = match &attrs.with {
            Some(module) => quote!(#module::encode(#b, w);),
            None => quote!(::lifeline_encode::Encode::encode(#b, w);),
        };
        let write = quote! {
            w.key(#key);
            #value
        };
        writes.push(match &attrs.skip_serializing_if {
            Some(skip) => quote! {
                if !#skip(#b) {
                    #write
                }
            },
            None => write,
        });
    }
    Ok(quote!(#(#writes)*))
}

fn enumeration(e: &syn::DataEnum, c: &Container) -> syn::Result<TokenStream> {
    let mut arms = Vec::new();
    // Each unit variant's whole text, a literal: an enum of unit variants
    // only picks its text and writes it once, instead of one write per
    // variant.
    let mut texts = Vec::new();
    for variant in &e.variants {
        let ident = &variant.ident;
        let name = crate::variant_name(variant, c)?;
        plain(&name)?;
        if let Some(tag) = &c.tag {
            plain(tag)?;
        }
        if let Some(key) = &c.content {
            plain(key)?;
        }
        let (pattern, bound) = bind(quote!(Self::#ident), &variant.fields);
        let write = match (&c.tag, &c.content) {
            (Some(tag), None) => {
                let head = literal(format!("{{\"{tag}\":\"{name}\""));
                match &variant.fields {
                    Fields::Unit => {
                        let whole = literal(format!("{{\"{tag}\":\"{name}\"}}"));
                        {
                            texts.push(quote!(#pattern => #whole,));
                            quote!(w.raw(#whole);)
                        }
                    }
                    Fields::Unnamed(_) if bound.len() == 1 => {
                        let only = &bound[0].1;
                        quote! {
                            w.raw(#head);
                            let at = w.len();
                            ::lifeline_encode::Encode::encode(#only, w);
                            w.merge_object(at);
                        }
                    }
                    Fields::Unnamed(_) => {
                        return Err(syn::Error::new_spanned(
                            variant,
                            "an internally tagged enum has no tuple variants",
                        ))
                    }
                    Fields::Named(_) => {
                        let fields = named_fields(&bound)?;
                        quote! {
                            w.raw(#head);
                            #fields
                            w.raw("}");
                        }
                    }
                }
            }
            (Some(tag), Some(key)) => match &variant.fields {
                Fields::Unit => {
                    let whole = literal(format!("{{\"{tag}\":\"{name}\"}}"));
                    {
                        texts.push(quote!(#pattern => #whole,));
                        quote!(w.raw(#whole);)
                    }
                }
                _ => wrapped(
                    format!("{{\"{tag}\":\"{name}\",\"{key}\":"),
                    &variant.fields,
                    &bound,
                )?,
            },
            (None, Some(_)) => {
                return Err(syn::Error::new(Span::call_site(), "content needs a tag"))
            }
            (None, None) => match &variant.fields {
                Fields::Unit => {
                    let whole = literal(format!("\"{name}\""));
                    {
                        texts.push(quote!(#pattern => #whole,));
                        quote!(w.raw(#whole);)
                    }
                }
                _ => wrapped(format!("{{\"{name}\":"), &variant.fields, &bound)?,
            },
        };
        arms.push(quote!(#pattern => { #write }));
    }
    if texts.len() == e.variants.len() && !texts.is_empty() {
        return Ok(quote! {
            let text: &str = match self {
                #(#texts)*
            };
            w.raw(text);
        });
    }
    Ok(quote! {
        match self {
            #(#arms)*
        }
    })
}
