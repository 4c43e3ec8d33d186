//! Fixed control-message layouts: the `layout!` macro defines a message
//! struct whose fields are consecutive words of the test-specific data, so
//! that its encoder and decoder cannot disagree, and [`Words`] says how each
//! field type becomes words.

use super::message::{join_u64, split_u64, Message};

/// A field of a layout: how many data words it takes and how it becomes them.
pub trait Words: Copy {
    const COUNT: usize;
    fn put(self, m: &mut Message, at: usize);
    fn get(m: &Message, at: usize) -> Self;
}

/// The one-word fields, through the message's word accessors.
macro_rules! one_word {
    ($($ty:ty: $get:ident, $set:ident;)*) => {$(
        impl Words for $ty {
            const COUNT: usize = 1;
            fn put(self, m: &mut Message, at: usize) {
                m.$set(at, self)
            }
            fn get(m: &Message, at: usize) -> Self {
                m.$get(at)
            }
        }
    )*};
}

one_word! {
    u32: data_u32, set_data_u32;
    i32: data_i32, set_data_i32;
    f32: data_f32, set_data_f32;
}

/// A C `double` that its sender put through `htond`: an 8-byte big-endian
/// IEEE double, high word first.
impl Words for f64 {
    const COUNT: usize = 2;
    fn put(self, m: &mut Message, at: usize) {
        let (hi, lo) = split_u64(self.to_bits());
        m.set_data_u32(at, hi);
        m.set_data_u32(at + 1, lo);
    }
    fn get(m: &Message, at: usize) -> Self {
        f64::from_bits(join_u64(m.data_u32(at), m.data_u32(at + 1)))
    }
}

/// Defines a message struct whose fields are consecutive words in
/// declaration order, so that encode and decode cannot disagree; `swapped`
/// writes the type word byte-reversed, as stock netserver's results.
///
/// The Unix-domain messages (`wire::unix`) say `path: true` or `path: false`:
/// `true` appends `path_name_len` and `unix_path` after the last word, and
/// both convert to and from that module's `Fields` (`UnixPath` and `Fields`
/// must be in scope where they are defined). Without `path`, a plain layout
/// (the legacy BSD messages).
macro_rules! layout {
    (
        $(#[$meta:meta])*
        $name:ident { kind: $kind:expr, swapped: $swapped:expr, header: $header:ident, path: true }
        $($fields:tt)*
    ) => {
        $crate::layout::layout! {
            @define [$(#[$meta])*] $name, $kind, $swapped, $header,
            [
                /// `path_name_len` and `unix_path`.
                pub path: UnixPath,
            ]
            true; $($fields)*
        }
    };
    (
        $(#[$meta:meta])*
        $name:ident { kind: $kind:expr, swapped: $swapped:expr, header: $header:ident, path: false }
        $($fields:tt)*
    ) => {
        $crate::layout::layout! {
            @define [$(#[$meta])*] $name, $kind, $swapped, $header, [] false; $($fields)*
        }
    };
    (
        $(#[$meta:meta])*
        $name:ident { kind: $kind:expr, swapped: $swapped:expr, header: $header:ident }
        $($fields:tt)*
    ) => {
        $crate::layout::layout! {
            @define [$(#[$meta])*] $name, $kind, $swapped, $header, [] plain; $($fields)*
        }
    };
    (
        @define [$($meta:tt)*] $name:ident, $kind:expr, $swapped:expr, $header:ident,
        [$($path_field:tt)*] $path:tt;
        $( $(#[$fmeta:meta])* $field:ident: $ty:ty, )*
    ) => {
        $($meta)*
        #[derive(Debug, Clone, PartialEq, Default)]
        pub struct $name {
            /// Header word 1: `serv_errno` in a response or results; in a
            /// request netserver's CPU binding (-1 for none).
            pub $header: i32,
            $( $(#[$fmeta])* pub $field: $ty, )*
            $($path_field)*
        }

        impl $name {
            /// The type word this message carries.
            pub const KIND: u32 = $kind;
            /// Data words before the path fields (the whole layout without them).
            pub const WORDS: usize = 0 $(+ <$ty as $crate::layout::Words>::COUNT)*;

            pub fn encode(&self) -> $crate::message::Message {
                let mut m = $crate::message::Message::new(0, self.$header);
                if $swapped {
                    m.set_kind_swapped($kind);
                } else {
                    m.set_word(0, $kind);
                }
                let mut at = 0usize;
                $(
                    $crate::layout::Words::put(self.$field, &mut m, at);
                    at += <$ty as $crate::layout::Words>::COUNT;
                )*
                debug_assert_eq!(at, Self::WORDS);
                $crate::layout::layout!(@put_path $path, self, m);
                m
            }

            /// Reads every field; the type word is not checked here.
            #[allow(clippy::needless_update)]
            pub fn decode(m: &$crate::message::Message) -> Self {
                let mut next = 0usize;
                let mut at = |count: usize| {
                    next += count;
                    next - count
                };
                #[allow(unused_mut)]
                let mut decoded = $name {
                    $header: m.serv_errno(),
                    $( $field: <$ty as $crate::layout::Words>::get(
                        m,
                        at(<$ty as $crate::layout::Words>::COUNT),
                    ), )*
                    ..Default::default()
                };
                $crate::layout::layout!(@get_path $path, decoded, m);
                decoded
            }
        }

        $crate::layout::layout!(@fields $path, $name, $header, [$($field)*]);
    };
    (@fields plain, $($rest:tt)*) => {};
    (@fields $path:tt, $name:ident, $header:ident, [$($field:ident)*]) => {
        impl From<&$name> for Fields {
            fn from(x: &$name) -> Fields {
                Fields {
                    $header: x.$header,
                    $( $field: x.$field, )*
                    path: $crate::layout::layout!(@path_of $path, x),
                    ..Default::default()
                }
            }
        }

        impl From<&Fields> for $name {
            #[allow(clippy::needless_update)]
            fn from(f: &Fields) -> $name {
                #[allow(unused_mut)]
                let mut x = $name {
                    $header: f.$header,
                    $( $field: f.$field, )*
                    ..Default::default()
                };
                $crate::layout::layout!(@set_path $path, x, f);
                x
            }
        }
    };
    (@path_of true, $from:ident) => { $from.path.clone() };
    (@path_of false, $from:ident) => { UnixPath::default() };
    (@put_path true, $self:ident, $m:ident) => { $self.path.put(&mut $m, Self::WORDS) };
    (@put_path $other:tt, $self:ident, $m:ident) => {};
    (@get_path true, $value:ident, $m:ident) => { $value.path = UnixPath::get($m, Self::WORDS) };
    (@get_path $other:tt, $value:ident, $m:ident) => {};
    (@set_path true, $value:ident, $f:ident) => { $value.path = $f.path.clone() };
    (@set_path false, $value:ident, $f:ident) => {};
}

pub(crate) use layout;
